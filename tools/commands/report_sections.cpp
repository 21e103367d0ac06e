// The report section of each workload kind; std::visit makes a new kind's section required.
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "tools/commands/report.hpp"
#include "tools/commands/step_section.hpp"

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;

// Per flow: id, times, route; per link used: bandwidth and latency.
void flows_section(const ReportInput& in, Json& r) {
  const work::CaseResult& c = in.result.cases.front();
  const topo::Cluster& cluster = *in.result.cluster;
  Json flows = Json::array();
  Json links = Json::object();
  const auto& tasks = c.plan.tasks();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const work::PlanTask& t = tasks[i];
    const sim::TaskTimes& tt = c.outcome.times[i];
    Json names = Json::array();
    for (topo::LinkId l : c.outcome.route(static_cast<work::PlanTaskId>(i))) {
      const topo::Link& link = cluster.link(l);
      names.push_back(link.name);
      if (!links.contains(link.name)) {
        links[link.name] = {{"bandwidth_Bps", link.bandwidth.bytes_per_s},
                            {"latency_s", link.latency.seconds()}};
      }
    }
    flows.push_back({{"id", c.plan.label(t)},
                     {"src", t.src},
                     {"dst", t.dst},
                     {"bytes", t.bytes.n},
                     {"start_s", tt.start.seconds()},
                     {"latency_s", c.outcome.latency[i].seconds()},
                     {"finish_s", tt.end.seconds()},
                     {"links", std::move(names)}});
  }
  r["flows"] = std::move(flows);
  r["links"] = std::move(links);
  r["software_overhead_s"] = cluster.spec().software_overhead.seconds();
}

Json validation_row(const work::Validation& v, double predicted) {
  return {{"metric", v.metric},
          {"bytes", v.bytes ? Json(v.bytes->n) : Json(nullptr)},
          {"predicted", predicted},
          {"published", v.published},
          {"error", (predicted - v.published) / v.published},
          {"source", v.source}};
}

void validation_section(const ReportInput& in, const Json& rows, Json& r) {
  const auto& v = in.file.experiment.validation;
  if (!v || !v->bytes) {
    return;
  }
  for (const Json& row : rows) {
    if (row["bytes"].get<std::int64_t>() == v->bytes->n) {
      r["validation"] = validation_row(*v, row[v->metric].get<double>());
    }
  }
}

double max_over_min(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return lo == v.end() || *lo <= 0 ? 0.0 : *hi / *lo;
}

// Ring steps of one rank (the most loaded of GPU 0's ring) in the first layer's forward pass:
// compute, the transfer it sends, and how long its compute stream waited for the block to arrive.
Json cp_steps(const work::CaseResult& c, const work::CpDetails& cp, int rank) {
  Json steps = Json::array();
  const auto& compute = cp.step_compute[static_cast<std::size_t>(rank)];
  const auto& send = cp.step_send[static_cast<std::size_t>(rank)];
  Time previous_end;
  for (std::size_t j = 0; j < compute.size(); ++j) {
    const sim::TaskTimes& t = c.outcome.times[compute[j]];
    Json step = {{"step", j}, {"compute_s", (t.end - t.start).seconds()}};
    if (j < send.size()) {
      const sim::TaskTimes& f = c.outcome.times[send[j]];
      step["transfer_s"] = (f.end - f.start).seconds();
    } else {
      step["transfer_s"] = nullptr;
    }
    step["wait_s"] = j == 0 ? 0.0 : std::max(0.0, (t.start - previous_end).seconds());
    previous_end = t.end;
    steps.push_back(std::move(step));
  }
  return steps;
}

void attention_layer_section(const ReportInput& in, const work::AttentionLayerJob& job, Json& r) {
  const work::CaseResult& c = in.result.cases.front();
  const work::CpDetails& cp = *c.cp();
  const work::Summary& s = c.summary;
  Json out;
  out["algorithm"] = cp.algorithm;
  out["balance"] = cp.balance;
  out["degree"] = cp.degree;
  out["ulysses_degree"] = cp.ulysses_degree;
  out["ring_degree"] = cp.ring_degree;
  out["mode"] = work::mode_name(job.mode);
  out["passes"] = work::passes_name(job.passes);
  out["layers"] = job.layers;
  out["block_tokens"] = cp.block_tokens;
  out["tokens_per_rank"] = cp.tokens_per_rank;
  out["work_units_per_rank"] = cp.work_units_per_rank;
  std::vector<double> units(cp.work_units_per_rank.begin(), cp.work_units_per_rank.end());
  out["work_units_max_over_min"] = max_over_min(units);
  out["flops_per_rank"] = cp.flops_per_rank;
  out["flops_max_over_min"] = max_over_min(cp.flops_per_rank);
  out["overlap_threshold_tokens"] = cp.overlap_threshold_tokens;
  out["ring_link"] = cp.ring_link;
  out["min_seq_per_rank"] = cp.min_seq_per_rank;
  out["cp_bytes_per_gpu_fwd"] = cp.cp_bytes_per_gpu_fwd;
  Time attention_exposed;
  Time attention_compute;
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    if (c.plan.phases()[p].name == "attention") {
      attention_exposed += s.phases[p].exposed;
      attention_compute += s.phases[p].compute;
    }
  }
  out["attention_compute_s"] = attention_compute.seconds();
  out["attention_exposed_comm_s"] = attention_exposed.seconds();
  out["layer_time_s"] = s.step.seconds() / static_cast<double>(job.layers);
  out["steps_rank"] = cp.steps_gpu;
  out["steps"] = cp_steps(c, cp, cp.steps_gpu);
  r["cp"] = std::move(out);
  if (const auto& v = in.file.experiment.validation) {
    r["validation"] = validation_row(*v, s.step.seconds());
  }
}

void collective_section(const ReportInput& in, const work::CollectiveJob& job, Json& r) {
  const work::Experiment& e = in.file.experiment;
  const work::Mesh mesh(e.parallel);
  const work::JobEnv env{e.cluster, e.nccl, mesh, e.model ? &*e.model : nullptr, e.seed,
                         &e.deepep};
  const work::BuildEnv build{env, *in.result.cluster, nullptr};
  const std::vector<std::vector<int>> sets = job.rank_sets(e.cluster, mesh);
  const int n = static_cast<int>(sets.front().size());
  Json c;
  c["op"] = work::op_name(job.op);
  c["algorithm"] = work::algorithm_name(job.algorithm);
  c["ranks"] = n;
  c["groups"] = sets.size();
  c["group"] = job.group ? Json(work::dim_name(*job.group)) : Json(nullptr);
  c["chunks"] = job.chunks;
  Json rows = Json::array();
  for (std::size_t i = 0; i < job.sizes.size(); ++i) {
    const work::CaseResult& result = in.result.cases[i];
    const Bytes size = job.sizes[i];
    const Time time = result.outcome.makespan;
    // (A collective that moves nothing takes no time: no bandwidth, not NaN.)
    const double algbw =
        time > Time{} ? static_cast<double>(size.n) / time.seconds() / 1e9 : 0.0;
    const std::size_t slash = result.choice.find('/');
    Json row = {{"bytes", size.n},
                {"algorithm", result.choice.substr(0, slash)},
                {"protocol", slash == std::string::npos ? Json(nullptr)
                                                        : Json(result.choice.substr(slash + 1))},
                {"time_s", time.seconds()},
                {"algbw_GBps", algbw},
                {"busbw_GBps", algbw * work::busbw_factor(job.op, n)},
                {"ib_bytes", result.summary.ib_bytes.n},
                {"nvlink_bytes", result.summary.nvlink_bytes.n}};
    if (job.op == work::CollectiveOp::AllToAll) {
      row["ib_bytes_flat"] = work::flat_ib_bytes(build, job, size);
    }
    for (const auto& [name, bytes] : result.metrics) {
      // DeepEP's "bottleneck bandwidth": its benchmark's bytes per rank over the time.
      const std::string rate = name.substr(0, name.find("_bytes")) + "_GBps";
      row[rate] = bytes / time.seconds() / 1e9;
    }
    rows.push_back(std::move(row));
  }
  validation_section(in, rows, r);
  const Json& last = rows.back();
  c["time_s"] = last["time_s"];
  c["algbw_GBps"] = last["algbw_GBps"];
  c["busbw_GBps"] = last["busbw_GBps"];
  c["rows"] = std::move(rows);
  r["collective"] = std::move(c);
}

// Bytes of each phase's flows per pass, over InfiniBand (a flow that crosses a NIC) and
// NVLink (one that crosses an NVLink hop), as the run routed them.
Json exchange_bytes(const work::CaseResult& c, const topo::Cluster& cluster) {
  std::map<std::pair<std::string, std::string>, std::pair<std::int64_t, std::int64_t>> sums;
  const auto& tasks = c.plan.tasks();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const work::PlanTask& t = tasks[i];
    if (t.kind != work::PlanTaskKind::Flow) {
      continue;
    }
    const work::RouteKinds kinds =
        work::route_kinds(cluster, c.outcome.route(static_cast<work::PlanTaskId>(i)));
    const work::Phase& ph = c.plan.phases()[t.phase];
    auto& [ib_bytes, nvlink_bytes] = sums[{ph.pass, ph.name}];
    ib_bytes += kinds.ib ? t.bytes.n : 0;
    nvlink_bytes += kinds.nvlink ? t.bytes.n : 0;
  }
  Json out = Json::object();
  for (const auto& [key, bytes] : sums) {
    out[key.first][key.second] = {{"ib", bytes.first}, {"nvlink", bytes.second}};
  }
  return out;
}

// How the layer exchanges its tokens: the algorithm and its overlap, the passes and layers
// simulated, and the EP group.
void moe_exchange_fields(const work::MoeLayerJob& job, const work::EpDetails& ep, Json& out) {
  out["algorithm"] = work::ep_algorithm_name(job.algorithm);
  if (job.algorithm == work::EpAlgorithm::TwoTier) {
    out["pieces"] = work::pieces_name(job.pieces_used());
  }
  out["overlap"] = work::ep_overlap_name(job.overlap);
  out["micro_batches"] = ep.micro_batches;
  out["passes"] = work::passes_name(job.passes);
  out["layers"] = job.layers;
  out["comm_sms"] = job.comm_sms;
  out["compute_slowdown"] = ep.compute_slowdown;
  out["degree"] = ep.degree;
  out["groups"] = ep.groups;
}

// How tokens are routed: the draw and its distribution, the balancer, the capacity and where
// the experts are placed (a setting only its own distribution or balancer has is null).
void moe_routing_fields(const work::MoeLayerJob& job, const work::EpDetails& ep, Json& out) {
  out["tokens_per_gpu"] = job.routing.tokens_per_gpu;
  out["top_k"] = job.routing.top_k;
  out["max_nodes_per_token"] = job.routing.max_nodes_per_token;
  out["distribution"] = work::distribution_name(job.routing.distribution);
  out["zipf_s"] = job.routing.distribution == work::RoutingDistribution::Zipf
                      ? Json(job.routing.zipf_s)
                      : Json(nullptr);
  out["dirichlet_alpha"] = job.routing.distribution == work::RoutingDistribution::Dirichlet
                               ? Json(job.routing.dirichlet_alpha)
                               : Json(nullptr);
  out["balancer"] = work::balancer_name(job.balancer);
  out["aux_loss_weight"] =
      job.balancer == work::Balancer::AuxLoss ? Json(job.aux_loss_weight) : Json(nullptr);
  out["balance_steps"] = ep.balance_steps;
  out["capacity_factor"] = job.routing.capacity_factor > 0 ? Json(job.routing.capacity_factor)
                                                           : Json(nullptr);
  out["placement"] = job.redundant_experts > 0    ? "redundant"
                     : job.routing.placement.empty() ? "even"
                                                     : "explicit";
  out["redundant_experts"] = job.redundant_experts;
}

// Where the routed tokens went: the experts' slots on each rank, the selections dropped over
// capacity, the tokens per expert and per rank and how uneven they are, the reach of a token.
void moe_token_fields(const work::EpDetails& ep, Json& out) {
  Json slots = Json::array();
  for (const std::vector<int>& rank : ep.placement) {
    slots.push_back(rank.size());
  }
  out["slots_per_rank"] = std::move(slots);
  out["experts_per_rank"] = ep.placement;
  out["selections"] = ep.selections;
  out["dropped_tokens"] = ep.dropped;
  out["dropped_fraction"] =
      ep.selections > 0 ? static_cast<double>(ep.dropped) / static_cast<double>(ep.selections)
                        : 0.0;
  out["tokens_per_expert"] = ep.tokens_per_expert;
  out["tokens_per_rank"] = ep.tokens_per_rank;
  const double rank_ratio = work::max_over_mean(ep.tokens_per_rank);
  out["max_over_mean"] = rank_ratio;
  out["expert_max_over_mean"] = work::max_over_mean(ep.tokens_per_expert);
  out["idle_expert_fraction"] = rank_ratio > 0 ? 1 - 1 / rank_ratio : 0.0;
  out["nodes_per_token_mean"] = ep.nodes_per_token_mean;
  out["gpus_per_token_mean"] = ep.gpus_per_token_mean;
}

// The "ep" object of a MoE layer: its settings, where its tokens went, then the bytes it
// exchanged and the time of its busiest rank.
void moe_layer_section(const ReportInput& in, const work::MoeLayerJob& job, Json& r) {
  const work::CaseResult& c = in.result.cases.front();
  const work::EpDetails& ep = *c.ep();
  const work::Summary& s = c.summary;
  const work::RankTime& busiest = s.ranks[static_cast<std::size_t>(s.critical_rank)];
  Json out;
  moe_exchange_fields(job, ep, out);
  moe_routing_fields(job, ep, out);
  moe_token_fields(ep, out);
  out["bytes"] = exchange_bytes(c, *in.result.cluster);
  out["busiest_rank"] = s.critical_rank;
  out["compute_s"] = busiest.compute.seconds();
  out["comm_s"] = busiest.comm.seconds();
  out["exposed_comm_s"] = busiest.exposed.seconds();
  out["hidden_comm_share"] =
      busiest.comm.count_ps() > 0
          ? 1 - busiest.exposed.seconds() / busiest.comm.seconds()
          : 0.0;
  out["compute_comm_ratio"] =
      busiest.comm.count_ps() > 0 ? busiest.compute.seconds() / busiest.comm.seconds() : 0.0;
  out["layer_time_s"] = s.step.seconds() / static_cast<double>(job.layers);
  r["ep"] = std::move(out);
}

}  // namespace

void kind_section(const ReportInput& in, Json& r) {
  std::visit(work::Overloaded{
                 [&](const work::FlowsJob& /*job*/) { flows_section(in, r); },
                 [&](const work::CollectiveJob& job) { collective_section(in, job, r); },
                 [&](const work::AttentionLayerJob& job) { attention_layer_section(in, job, r); },
                 [&](const work::MoeLayerJob& job) { moe_layer_section(in, job, r); },
                 [&](const work::TransformerLayerJob& job) {
                   attention_layer_section(in, job.attention, r);
                   if (job.moe) {
                     moe_layer_section(in, job.moe_part(in.file.experiment.parallel), r);
                   }
                 },
                 [&](const work::TrainingStepJob& /*job*/) {
                   r["step"] = step_section(in.result.cases.front());
                   if (const auto& v = in.file.experiment.validation) {
                     r["validation"] = validation_row(*v, r["step"][v->metric].get<double>());
                   }
                 },
             },
             in.file.experiment.job);
}

}  // namespace hopsim::tools
