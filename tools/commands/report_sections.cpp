// The report section of each workload kind; std::visit makes a new kind's section required.
#include <fmt/format.h>

#include "tools/commands/report.hpp"

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

void validation_section(const ReportInput& in, const Json& rows, Json& r) {
  const auto& v = in.file.experiment.validation;
  if (!v) {
    return;
  }
  for (const Json& row : rows) {
    if (row["bytes"].get<std::int64_t>() == v->bytes.n) {
      const double predicted = row[v->metric].get<double>();
      r["validation"] = {{"metric", v->metric},
                         {"bytes", v->bytes.n},
                         {"predicted", predicted},
                         {"published", v->published},
                         {"error", (predicted - v->published) / v->published},
                         {"source", v->source}};
    }
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
    const double algbw = static_cast<double>(size.n) / time.seconds() / 1e9;
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

}  // namespace

void kind_section(const ReportInput& in, Json& r) {
  std::visit(work::Overloaded{
                 [&](const work::FlowsJob& /*job*/) { flows_section(in, r); },
                 [&](const work::CollectiveJob& job) { collective_section(in, job, r); },
                 // Not simulated yet: run() refuses them, so there is no run to report on.
                 [&](const work::AttentionLayerJob& /*job*/) {},
                 [&](const work::MoeLayerJob& /*job*/) {},
             },
             in.file.experiment.job);
}

}  // namespace hopsim::tools
