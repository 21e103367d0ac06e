// The report section of each workload kind; std::visit makes a new kind's section required.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tools/commands/chakra_figures.hpp"
#include "tools/commands/collective_figures.hpp"
#include "tools/commands/cp_figures.hpp"
#include "tools/commands/ep_figures.hpp"
#include "tools/commands/report.hpp"
#include "tools/commands/step_section.hpp"
#include "tools/commands/validation_figures.hpp"
#include "workloads/ep/training_routing.hpp"

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
                     {"src", t.src.value()},
                     {"dst", t.dst.value()},
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

// The experiment's validation and what the run predicts of it.
Json validation_row(const ValidationFigures& f) {
  const work::Validation& v = f.validation;
  return {{"metric", v.metric},
          {"bytes", v.bytes ? Json(v.bytes->n) : Json(nullptr)},
          {"predicted", f.predicted},
          {"published", v.published},
          {"error", f.error},
          {"source", v.source}};
}

// Ring steps of one rank (the most loaded of GPU 0's ring) in the first layer's forward pass.
Json cp_steps(const std::vector<CpRingStep>& steps) {
  Json out = Json::array();
  for (std::size_t j = 0; j < steps.size(); ++j) {
    const CpRingStep& st = steps[j];
    out.push_back({{"step", j},
                   {"compute_s", st.compute_s},
                   {"transfer_s", st.transfer_s ? Json(*st.transfer_s) : Json(nullptr)},
                   {"wait_s", st.wait_s}});
  }
  return out;
}

// The "cp" object of an attention layer: its CP settings and balance, the attention phase,
// the ring steps; then its validation.
void attention_layer_section(const ReportInput& in, const work::AttentionLayerJob& job, Json& r) {
  const work::CaseResult& c = in.result.cases.front();
  const work::CpDetails& cp = *c.cp();
  const CpFigures f = cp_figures(c, cp, job.layers, in.file.experiment.validation);
  Json out;
  out["algorithm"] = cp.algorithm;
  if (job.cp.impl == work::CpImpl::Torch) {  // PyTorch's ring (megatron's keep their keys)
    out["impl"] = cp.impl;
    out["rotate_method"] = cp.rotate_method;
  }
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
  out["work_units_max_over_min"] = f.work_units_max_over_min;
  out["flops_per_rank"] = cp.flops_per_rank;
  out["flops_max_over_min"] = f.flops_max_over_min;
  out["overlap_threshold_tokens"] = cp.overlap_threshold_tokens;
  out["ring_link"] = cp.ring_link;
  out["min_seq_per_rank"] = cp.min_seq_per_rank;
  out["cp_bytes_per_gpu_fwd"] = cp.cp_bytes_per_gpu_fwd;
  out["attention_compute_s"] = f.attention_compute_s;
  out["attention_exposed_comm_s"] = f.attention_exposed_comm_s;
  out["layer_time_s"] = f.layer_time_s;
  out["steps_rank"] = cp.steps_gpu;
  out["steps"] = cp_steps(f.steps);
  if (f.output_all_to_all_s) {
    out["output_all_to_all_s"] = *f.output_all_to_all_s;
  }
  r["cp"] = std::move(out);
  if (f.validation) {
    r["validation"] = validation_row(*f.validation);
  }
}

// One size of a collective run, nccl-tests style.
Json collective_row(const CollectiveRow& f) {
  Json row = {{"bytes", f.bytes},
              {"algorithm", f.algorithm},
              {"protocol", f.protocol ? Json(*f.protocol) : Json(nullptr)},
              {"time_s", f.time_s},
              {"algbw_GBps", f.algbw_GBps},
              {"busbw_GBps", f.busbw_GBps},
              {"ib_bytes", f.ib_bytes},
              {"nvlink_bytes", f.nvlink_bytes}};
  if (f.ib_bytes_flat) {
    row["ib_bytes_flat"] = *f.ib_bytes_flat;
  }
  for (const auto& [rate, value] : f.rates) {
    row[rate] = value;
  }
  return row;
}

// The validation of a collective run, then its "collective" object: the op, its groups, a
// row per size and the last row's time and bandwidths.
void collective_section(const ReportInput& in, const work::CollectiveJob& job, Json& r) {
  const CollectiveFigures f = collective_figures(in.file.experiment, in.result, job);
  Json c;
  c["op"] = work::op_name(job.op);
  c["algorithm"] = work::algorithm_name(job.algorithm);
  c["ranks"] = f.ranks;
  c["groups"] = f.groups;
  c["group"] = job.group ? Json(work::dim_name(*job.group)) : Json(nullptr);
  c["chunks"] = job.chunks;
  Json rows = Json::array();
  for (const CollectiveRow& row : f.rows) {
    rows.push_back(collective_row(row));
  }
  if (f.validation) {
    r["validation"] = validation_row(*f.validation);
  }
  const Json& last = rows.back();
  c["time_s"] = last["time_s"];
  c["algbw_GBps"] = last["algbw_GBps"];
  c["busbw_GBps"] = last["busbw_GBps"];
  c["rows"] = std::move(rows);
  r["collective"] = std::move(c);
}

// Bytes of each phase's flows per pass, over InfiniBand (a flow that crosses a NIC) and
// NVLink (one that crosses an NVLink hop), as the run routed them.
Json exchange_bytes(const EpFigures& f) {
  Json out = Json::object();
  for (const auto& [key, bytes] : f.bytes) {
    out[key.first][key.second] = {{"ib", bytes.ib}, {"nvlink", bytes.nvlink}};
  }
  return out;
}

// How the layer exchanges its tokens: the algorithm and its overlap, the passes and layers
// simulated, and the EP group.
void moe_exchange_fields(const work::MoeLayerJob& job, const work::EpDetails& ep,
                         const EpFigures& f, Json& out) {
  out["algorithm"] = work::ep_algorithm_name(job.algorithm);
  if (f.pieces) {
    out["pieces"] = *f.pieces;
  }
  out["overlap"] = work::ep_overlap_name(job.overlap);
  out["micro_batches"] = ep.micro_batches;
  out["passes"] = work::passes_name(job.passes);
  out["layers"] = job.layers;
  out["layers_simulated"] = ep.layers_simulated;
  out["comm_sms"] = job.comm_sms;
  out["compute_slowdown"] = ep.compute_slowdown;
  out["sm_held_s"] = f.sm_held_s;
  out["sm_tax_s"] = f.sm_tax_s;
  out["hbm_share"] = ep.hbm_share;
  out["degree"] = ep.degree;
  out["groups"] = ep.groups;
}

Json optional_number(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// How tokens are routed: the draw and its distribution, the balancer, the capacity and where
// the experts are placed (a setting only its own distribution or balancer has is null).
void moe_routing_fields(const work::MoeLayerJob& job, const work::EpDetails& ep,
                        const EpFigures& f, Json& out) {
  out["tokens_per_gpu"] = job.routing.tokens_per_gpu;
  out["top_k"] = job.routing.top_k;
  out["max_nodes_per_token"] = job.routing.max_nodes_per_token;
  out["distribution"] = work::distribution_name(job.routing.distribution);
  out["zipf_s"] = optional_number(f.zipf_s);
  out["dirichlet_alpha"] = optional_number(f.dirichlet_alpha);
  // Training routing names the balancer whose residual it is (none is simulated).
  out["balancer"] = job.routing.distribution == work::RoutingDistribution::Training
                        ? work::residual_balancer_name(job.routing.residual_balancer)
                        : work::balancer_name(job.balancer);
  out["aux_loss_weight"] = optional_number(f.aux_loss_weight);
  out["balance_steps"] = ep.balance_steps;
  out["capacity_factor"] = optional_number(f.capacity_factor);
  out["placement"] = f.placement;
  out["redundant_experts"] = job.redundant_experts;
}

// Where the routed tokens went: the experts' slots on each rank, the selections dropped over
// capacity, the tokens per expert and per rank and how uneven they are, the reach of a token.
void moe_token_fields(const work::EpDetails& ep, const EpFigures& f, Json& out) {
  out["slots_per_rank"] = f.slots_per_rank;
  out["experts_per_rank"] = ep.placement;
  out["selections"] = ep.selections;
  out["dropped_tokens"] = ep.dropped;
  out["dropped_fraction"] = f.dropped_fraction;
  out["tokens_per_expert"] = ep.tokens_per_expert;
  out["tokens_per_rank"] = ep.tokens_per_rank;
  out["max_over_mean"] = f.max_over_mean;
  out["expert_max_over_mean"] = f.expert_max_over_mean;
  out["idle_expert_fraction"] = f.idle_expert_fraction;
  out["nodes_per_token_mean"] = ep.nodes_per_token_mean;
  out["gpus_per_token_mean"] = ep.gpus_per_token_mean;
}

// The "ep" object of a MoE layer: its settings, where its tokens went, then the bytes it
// exchanged and the time of its busiest rank.
void moe_layer_section(const ReportInput& in, const work::MoeLayerJob& job, Json& r,
                       const std::optional<work::Validation>& validation = std::nullopt) {
  const work::CaseResult& c = in.result.cases.front();
  const work::EpDetails& ep = *c.ep();
  const EpFigures f = ep_figures(c, job, ep, *in.result.cluster, validation);
  Json out;
  moe_exchange_fields(job, ep, f, out);
  moe_routing_fields(job, ep, f, out);
  moe_token_fields(ep, f, out);
  out["bytes"] = exchange_bytes(f);
  out["per_call"] = Json::object();
  for (const auto& [label, call] : f.per_call) {
    out["per_call"][label] = {{"each_s", call.each_s}, {"calls", call.calls}};
  }
  out["busiest_rank"] = f.busiest_rank.value();
  out["compute_s"] = f.compute_s;
  out["comm_s"] = f.comm_s;
  out["exposed_comm_s"] = f.exposed_comm_s;
  out["hidden_comm_share"] = f.hidden_comm_share;
  out["compute_comm_ratio"] = f.compute_comm_ratio;
  out["layer_time_s"] = f.layer_time_s;
  r["ep"] = std::move(out);
  if (f.validation) {
    r["validation"] = validation_row(*f.validation);
  }
}

// The trace a chakra run replayed: its files, ranks and what its nodes hold.
void chakra_section(const work::ChakraJob& job, Json& r) {
  const ChakraFigures f = chakra_figures(job);
  Json collectives = Json::object();
  for (const auto& [op, counted] : f.collectives) {
    collectives[op] = {{"nodes", counted.first}, {"bytes", counted.second}};
  }
  r["chakra"] = {{"trace", f.source},
                 {"schema_version", f.version},
                 {"ranks", f.ranks},
                 {"compute", f.compute},
                 {"kernels", f.kernels},
                 {"host_ops", f.host_ops},
                 {"metadata_nodes", f.metadata},
                 {"send_recv", {{"pairs", f.sends}, {"bytes", f.send_bytes}}},
                 {"collectives", std::move(collectives)},
                 {"dropped_dependencies", f.dropped_deps}};
}

}  // namespace

// The section of the experiment's kind, written from its figures.
void kind_section(const ReportInput& in, Json& r) {
  std::visit(work::Overloaded{
                 [&](const work::FlowsJob& /*job*/) { flows_section(in, r); },
                 [&](const work::ChakraJob& job) { chakra_section(job, r); },
                 [&](const work::CollectiveJob& job) { collective_section(in, job, r); },
                 [&](const work::AttentionLayerJob& job) { attention_layer_section(in, job, r); },
                 [&](const work::MoeLayerJob& job) {
                   moe_layer_section(in, job, r, in.file.experiment.validation);
                 },
                 [&](const work::TransformerLayerJob& job) {
                   attention_layer_section(in, job.attention, r);
                   if (job.moe) {
                     moe_layer_section(in, job.moe_part(in.file.experiment.parallel), r);
                   }
                 },
                 [&](const work::TrainingStepJob& /*job*/) {
                   const work::CaseResult& c = in.result.cases.front();
                   const StepFigures f = step_figures(c, in.file.experiment.validation);
                   r["step"] = step_section(c, f);
                   if (f.validation) {
                     r["validation"] = validation_row(*f.validation);
                   }
                 },
             },
             in.file.experiment.job);
  if (r.contains("validation")) {  // a what-if's published figure is the unchanged run's
    const std::vector<WhatIf> changes = what_ifs(in.file);
    r["validation"]["what_if"] = !changes.empty();
    r["validation"]["what_ifs"] = what_if_texts(changes);
  }
}

}  // namespace hopsim::tools
