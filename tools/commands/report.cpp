// Report JSON and terminal summary.
#include "tools/commands/report.hpp"

#include <fmt/format.h>

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;

double s_of(Time t) { return t.seconds(); }

Json common_keys(const ReportInput& in) {
  const work::Summary& s = in.summary;
  const work::RankTime& crit = s.ranks[static_cast<std::size_t>(s.critical_rank)];
  Json r;
  r["experiment"] = in.experiment.name;
  r["workload"] = in.experiment.kind;
  r["step_time_s"] = s_of(s.step);
  r["compute_s"] = s_of(crit.compute);
  r["comm_s"] = s_of(crit.comm);
  r["exposed_comm_s"] = s_of(crit.exposed);
  r["compute_comm_ratio"] =
      crit.comm > Time{} ? Json(crit.compute.seconds() / crit.comm.seconds()) : Json(nullptr);
  r["bytes"] = {{"nvlink", s.nvlink_bytes.n}, {"ib", s.ib_bytes.n}};
  r["flops"] = 0.0;
  const double max_s = crit.busy.seconds();
  r["ranks"] = {{"count", s.involved},
                {"critical", s.critical_rank},
                {"max_s", max_s},
                {"mean_s", s.mean_busy_s},
                {"imbalance", s.mean_busy_s > 0 ? Json(max_s / s.mean_busy_s) : Json(nullptr)}};
  Json phases = Json::array();
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    const work::PhaseTime& ph = s.phases[p];
    phases.push_back({{"name", in.plan.phases()[p].name},
                      {"pass", in.plan.phases()[p].pass},
                      {"start_s", s_of(ph.start)},
                      {"end_s", s_of(ph.end)},
                      {"compute_s", s_of(ph.compute)},
                      {"comm_s", s_of(ph.comm)},
                      {"exposed_comm_s", s_of(ph.exposed)}});
  }
  r["phases"] = std::move(phases);
  r["sim"] = {{"events", in.outcome.events},
              {"flows", in.outcome.flows},
              {"solves", in.outcome.solves}};
  if (in.wall_time) {
    r["sim"]["wall_s"] = in.outcome.wall_s;
  }
  r["compute_sources"] = Json::object();
  return r;
}

// Per flow: ids, times, route; per link used: bandwidth and latency.
void flows_section(const ReportInput& in, Json& r) {
  Json flows = Json::array();
  Json links = Json::object();
  const auto& tasks = in.plan.tasks();
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const work::PlanTask& t = tasks[i];
    const sim::TaskTimes& tt = in.outcome.times[i];
    Json names = Json::array();
    if (t.src != t.dst) {
      const topo::Route route = in.cluster.route(t.src, t.dst);
      for (topo::LinkId l : route.span()) {
        const topo::Link& link = in.cluster.link(l);
        names.push_back(link.name);
        if (!links.contains(link.name)) {
          links[link.name] = {{"bandwidth_Bps", link.bandwidth.bytes_per_s},
                              {"latency_s", link.latency.seconds()}};
        }
      }
    }
    flows.push_back({{"id", in.experiment.flows[i].id},
                     {"src", t.src},
                     {"dst", t.dst},
                     {"bytes", t.bytes.n},
                     {"start_s", s_of(tt.start)},
                     {"latency_s", s_of(in.outcome.latency[i])},
                     {"finish_s", s_of(tt.end)},
                     {"links", std::move(names)}});
  }
  r["flows"] = std::move(flows);
  r["links"] = std::move(links);
  r["software_overhead_s"] = in.cluster.spec().software_overhead.seconds();
}

void collective_section(const ReportInput& in, Json& r) {
  const work::CollectiveJob& job = in.experiment.collective;
  Json c;
  c["op"] = work::op_name(job.op);
  c["algorithm"] = work::algorithm_name(job.algorithm);
  c["ranks"] = job.ranks.size();
  c["chunks"] = job.chunks;
  Json rows = Json::array();
  for (const CollectiveRow& row : *in.rows) {
    Json j = {{"bytes", row.bytes.n},
              {"time_s", row.time.seconds()},
              {"algbw_GBps", row.algbw_GBps},
              {"busbw_GBps", row.busbw_GBps},
              {"ib_bytes", row.ib_bytes.n},
              {"nvlink_bytes", row.nvlink_bytes.n}};
    if (job.op == work::CollectiveOp::AllToAll) {
      j["ib_bytes_flat"] = row.ib_bytes_flat.n;
    }
    rows.push_back(std::move(j));
  }
  c["rows"] = std::move(rows);
  const CollectiveRow& last = in.rows->back();
  c["time_s"] = last.time.seconds();
  c["algbw_GBps"] = last.algbw_GBps;
  c["busbw_GBps"] = last.busbw_GBps;
  r["collective"] = std::move(c);
  if (const auto& v = in.experiment.validation) {
    for (const CollectiveRow& row : *in.rows) {
      if (row.bytes == v->bytes) {
        const double predicted = v->metric == "busbw_GBps" ? row.busbw_GBps : row.time.seconds();
        r["validation"] = {{"metric", v->metric},
                           {"bytes", v->bytes.n},
                           {"predicted", predicted},
                           {"published", v->published},
                           {"error", (predicted - v->published) / v->published},
                           {"source", v->source}};
      }
    }
  }
}

// The nccl-tests-like table of a collective run, with the InfiniBand saving of two-tier.
std::string collective_table(const Json& c) {
  std::string out;
  out += fmt::format("{} {} over {} ranks, {} chunk(s)\n", c["op"].get<std::string>(),
                     c["algorithm"].get<std::string>(), c["ranks"].get<int>(),
                     c["chunks"].get<int>());
  out += fmt::format("{:>14} {:>14} {:>12} {:>12} {:>16}\n", "size(B)", "time(us)",
                     "algbw(GB/s)", "busbw(GB/s)", "IB bytes");
  for (const auto& row : c["rows"]) {
    out += fmt::format("{:>14} {:>14.2f} {:>12.2f} {:>12.2f} {:>16}\n",
                       row["bytes"].get<std::int64_t>(), row["time_s"].get<double>() * 1e6,
                       row["algbw_GBps"].get<double>(), row["busbw_GBps"].get<double>(),
                       row["ib_bytes"].get<std::int64_t>());
  }
  const auto& last = c["rows"].back();
  if (last.contains("ib_bytes_flat")) {
    const auto flat = last["ib_bytes_flat"].get<std::int64_t>();
    const auto ib = last["ib_bytes"].get<std::int64_t>();
    out += fmt::format("InfiniBand bytes {} vs {} if flat ({:+.1f}%)\n", ib, flat,
                       flat > 0 ? 100.0 * static_cast<double>(ib - flat) /
                                      static_cast<double>(flat)
                                : 0.0);
  }
  return out;
}

}  // namespace

Json make_report(const ReportInput& in) {
  Json r = common_keys(in);
  if (in.experiment.kind == "flows") {
    flows_section(in, r);
  }
  if (in.rows != nullptr) {
    collective_section(in, r);
  }
  return r;
}

std::string format_summary(const Json& r) {
  std::string out = fmt::format("experiment {}  (workload {})\n", r["experiment"].get<std::string>(),
                                r["workload"].get<std::string>());
  if (r.contains("flows")) {
    const auto& flows = r["flows"];
    out += fmt::format("{:<12} {:>5} {:>5} {:>14} {:>12} {:>12} {:>12}\n", "flow", "src", "dst",
                       "bytes", "start_us", "latency_us", "finish_us");
    const std::size_t shown = std::min<std::size_t>(flows.size(), 20);
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& f = flows[i];
      out += fmt::format("{:<12} {:>5} {:>5} {:>14} {:>12.3f} {:>12.3f} {:>12.3f}\n",
                         f["id"].get<std::string>(), f["src"].get<int>(), f["dst"].get<int>(),
                         f["bytes"].get<std::int64_t>(), f["start_s"].get<double>() * 1e6,
                         f["latency_s"].get<double>() * 1e6, f["finish_s"].get<double>() * 1e6);
    }
    if (flows.size() > shown) {
      out += fmt::format("... {} more flows (see --json)\n", flows.size() - shown);
    }
  }
  if (r.contains("collective")) {
    out += collective_table(r["collective"]);
  }
  if (r.contains("validation")) {
    const auto& v = r["validation"];
    out += fmt::format("validation     {} at {} B: predicted {:.4g}, published {:.4g}, error "
                       "{:+.1f}%  ({})\n",
                       v["metric"].get<std::string>(), v["bytes"].get<std::int64_t>(),
                       v["predicted"].get<double>(), v["published"].get<double>(),
                       100 * v["error"].get<double>(), v["source"].get<std::string>());
  }
  out += fmt::format("step time      {:.3f} us\n", r["step_time_s"].get<double>() * 1e6);
  out += fmt::format("bytes          {} over NVLink, {} over InfiniBand\n",
                     r["bytes"]["nvlink"].get<std::int64_t>(),
                     r["bytes"]["ib"].get<std::int64_t>());
  const auto& ranks = r["ranks"];
  out += fmt::format("busiest rank   {} busy {:.3f} us (mean {:.3f} us)\n",
                     ranks["critical"].get<int>(), ranks["max_s"].get<double>() * 1e6,
                     ranks["mean_s"].get<double>() * 1e6);
  out += fmt::format("simulated      {} events, {} flows", r["sim"]["events"].get<std::uint64_t>(),
                     r["sim"]["flows"].get<std::uint64_t>());
  if (r["sim"].contains("wall_s")) {
    out += fmt::format(" in {:.3f} s", r["sim"]["wall_s"].get<double>());
  }
  out += "\n";
  return out;
}

}  // namespace hopsim::tools
