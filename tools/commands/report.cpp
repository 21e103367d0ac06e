// Report JSON: the common keys per case, and a section per workload kind.
#include "tools/commands/report.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tools/commands/sim_totals.hpp"
#include "topology/failures.hpp"
#include "workloads/compute/gpu_type_speed.hpp"

namespace hopsim::tools {
namespace {

using Json = nlohmann::ordered_json;

double s_of(Time t) { return t.seconds(); }

const char* links_name(topo::PerturbedPart part) {
  switch (part) {
    case topo::PerturbedPart::Nic:
      return "nic";
    case topo::PerturbedPart::NvLink:
      return "nvlink";
    case topo::PerturbedPart::Spine:
      return "spine";
    case topo::PerturbedPart::Compute:
    case topo::PerturbedPart::GpuType:
      break;
  }
  return "";
}

// The links of one perturbation: which, and what changed; a failed NIC's carriers.
void link_keys(const topo::Perturbation& p, const topo::Failures& failures, Json& one) {
  one["links"] = links_name(p.part);
  if (p.part == topo::PerturbedPart::Spine) {
    one["leaves"] = p.leaves;  // empty: every leaf
    one["spines"] = p.spines;
  }
  one["failed"] = p.failed;
  if (!p.failed) {
    one["bandwidth"] = p.bandwidth;
    one["extra_latency_us"] = p.extra_latency.seconds() * 1e6;
  } else if (p.part == topo::PerturbedPart::Nic) {
    std::vector<int> carriers;
    for (const int g : p.gpus) {
      carriers.push_back(failures.nic_carrier[static_cast<std::size_t>(g)]);
    }
    one["nic_carriers"] = carriers;  // whose NIC carries each GPU's traffic
  }
}

// The what-ifs as the experiment gave them, every field explicit; another GPU model's class
// speeds as the experiment priced them.
Json perturbations(const work::Experiment& e) {
  const topo::Spec& cluster = e.cluster;
  const topo::Failures failures = topo::failures_of(cluster);
  Json out = Json::array();
  for (const topo::Perturbation& p : cluster.perturbations) {
    Json one = {{"gpus", p.gpus}};
    if (!p.nodes.empty()) {
      one["nodes"] = p.nodes;
    }
    if (!p.rails.empty()) {
      one["rails"] = p.rails;
    }
    if (p.part == topo::PerturbedPart::Compute) {
      one["compute_speed"] = p.compute_speed;
      if (p.kernel_draw) {
        one["kernel_speed"] = {p.kernel_draw->speed_min, p.kernel_draw->speed_max};
        one["kernel_seed"] = p.kernel_draw->seed;
        one["kernel_mean_speed"] = p.kernel_draw->mean_speed();
      }
      if (p.drawn) {  // one GPU of a straggler draw, and what it was drawn from
        one["drawn_by"] = {{"entry", p.entry},
                           {"stragglers", p.drawn->share},
                           {"compute_speed", {p.drawn->speed_min, p.drawn->speed_max}},
                           {"of_gpus", p.drawn->population}};
      }
    } else if (p.part == topo::PerturbedPart::GpuType) {
      one["gpu"] = p.gpu->name;
      one["gpu_file"] = p.gpu_source;
      const work::PricedGpuType* priced = work::priced_type(e.gpu_types, p.entry);
      one["calibration"] = priced != nullptr ? priced->calibration : "none";
      const work::KernelSpeeds type = work::type_speeds(cluster.gpu, p, e.gpu_types);
      Json speeds = Json::object();  // per kernel class, of the cluster GPU's rate
      for (std::size_t k = 0; k < work::kKernelClasses; ++k) {
        speeds[std::string(work::kernel_class_name(static_cast<work::KernelClass>(k)))] = type[k];
      }
      one["class_speed"] = std::move(speeds);
    } else {
      link_keys(p, failures, one);
    }
    out.push_back(std::move(one));
  }
  return out;
}

Json setup_keys(const ReportInput& in) {
  const work::Experiment& e = in.file.experiment;
  Json r;
  r["experiment"] = e.name;
  r["workload"] = work::kind_name(e.job);
  r["cluster"] = {{"name", e.cluster.name},
                  {"file", in.file.cluster_file},
                  {"nodes", e.cluster.nodes},
                  {"gpus_per_node", e.cluster.gpus_per_node},
                  {"gpu", e.cluster.gpu.name}};
  r["model"] = e.model ? Json(e.model->name) : Json(nullptr);
  r["calibration"] = e.calibration ? Json(e.calibration_name) : Json(nullptr);
  if (!e.calibration_note.empty()) {
    r["calibration_choice"] = e.calibration_note;
  }
  r["seed"] = e.seed;
  if (!e.cluster.perturbations.empty()) {
    r["perturbations"] = perturbations(e);
  }
  return r;
}

Json compute_sources(const work::ComputeTally& tally) {
  Json out = Json::object();
  if (tally.total() == Time{}) {
    return out;  // no compute in this run
  }
  for (work::Source s : work::kSources) {
    if (s != work::Source::Recorded || tally.time(s) > Time{}) {
      out[std::string(work::source_name(s))] = tally.share(s);
    }
  }
  return out;
}

// Shares of compute time by kernel class, classes with none left out.
Json compute_kernels(const work::KernelTally& tally) {
  Json out = Json::object();
  const Time all = tally.total();
  for (const auto& [kind, time] : tally.nonzero()) {
    out[std::string(work::kernel_class_name(kind))] = time.seconds() / all.seconds();
  }
  return out;
}

// The links the most bytes crossed: bytes, load over the case's time (mean utilization) and
// at its highest (peak utilization), of each link's bandwidth.
Json busiest_links(const work::CaseResult& c, const topo::Cluster& cluster) {
  const std::size_t n = std::min(work::kReportLinks, c.link_loads.size());
  std::vector<std::int64_t> bytes(n, 0);
  const auto& tasks = c.plan.tasks();
  for (std::size_t i = 0; i < tasks.size() && n > 0; ++i) {
    if (tasks[i].kind != work::PlanTaskKind::Flow) {
      continue;
    }
    for (topo::LinkId l : c.outcome.route(static_cast<work::PlanTaskId>(i))) {
      for (std::size_t k = 0; k < n; ++k) {
        bytes[k] += c.link_loads[k].link == l ? tasks[i].bytes.n : 0;
      }
    }
  }
  for (std::int64_t& b : bytes) {  // repeated layers cross each link as the simulated ones did
    b = static_cast<std::int64_t>(std::llround(static_cast<double>(b) * c.plan_scale));
  }
  Json out = Json::array();
  const double step = c.summary.step.seconds();
  for (std::size_t k = 0; k < n; ++k) {
    const topo::Link& link = cluster.link(c.link_loads[k].link);
    const double capacity = link.bandwidth.bytes_per_s;
    double peak = 0;
    for (const auto& [at, load] : c.link_loads[k].samples) {
      peak = std::max(peak, load);
    }
    out.push_back({{"link", link.name},
                   {"bytes", bytes[k]},
                   {"utilization", step > 0 ? static_cast<double>(bytes[k]) / capacity / step : 0.0},
                   {"peak_utilization", peak / capacity}});
  }
  return out;
}

// The summary keys of one case (docs/report.md).
Json case_summary(const work::CaseResult& c, const topo::Cluster& cluster, bool wall_time) {
  const work::Summary& s = c.summary;
  const work::RankTime& crit = s.ranks[s.critical_rank.index()];
  Json r;
  r["step_time_s"] = s_of(s.step);
  r["compute_s"] = s_of(crit.compute);
  r["comm_s"] = s_of(crit.comm);
  r["exposed_comm_s"] = s_of(crit.exposed);
  r["compute_comm_ratio"] =
      crit.comm > Time{} ? Json(crit.compute.seconds() / crit.comm.seconds()) : Json(nullptr);
  r["bytes"] = {{"nvlink", s.nvlink_bytes.n}, {"ib", s.ib_bytes.n}};
  if (s.failed_links) {
    r["rerouted"] = {{"flows", s.rerouted_flows}, {"bytes", s.rerouted_bytes.n}};
  }
  r["flops"] = s.flops.n;
  const double max_s = crit.busy.seconds();
  r["ranks"] = {{"count", s.involved},
                {"critical", s.critical_rank.value()},
                {"max_s", max_s},
                {"mean_s", s.mean_busy_s},
                {"imbalance", s.mean_busy_s > 0 ? Json(max_s / s.mean_busy_s) : Json(nullptr)}};
  if (!s.critical_gpu.empty()) {  // a mixed cluster: the GPU model that set the pace
    r["ranks"]["critical_gpu"] = s.critical_gpu;
  }
  Json phases = Json::array();
  for (std::size_t p = 0; p < s.phases.size(); ++p) {
    const work::PhaseTime& ph = s.phases[p];
    phases.push_back({{"name", c.plan.phases()[p].name()},
                      {"pass", c.plan.phases()[p].pass()},
                      {"start_s", s_of(ph.start)},
                      {"end_s", s_of(ph.end)},
                      {"compute_s", s_of(ph.compute)},
                      {"comm_s", s_of(ph.comm)},
                      {"exposed_comm_s", s_of(ph.exposed)}});
  }
  r["phases"] = std::move(phases);
  r["compute_sources"] = compute_sources(s.compute_sources);
  r["compute_kernels"] = compute_kernels(s.compute_kernels);
  r["busiest_links"] = busiest_links(c, cluster);
  r["sim"] = {{"events", c.outcome.events},
              {"flows", c.outcome.flows},
              {"solves", c.outcome.solves}};
  if (wall_time) {
    r["sim"]["wall_s"] = c.outcome.wall_s;
  }
  return r;
}

// The engine's totals over the run (SimTotals); the wall time only when asked for.
Json sim_section(const ReportInput& in) {
  const SimTotals t = sim_totals(in.file.experiment, in.result);
  Json sim = {{"cases", t.cases},
              {"probes", t.probes},
              {"events", t.events},
              {"flows", t.flows},
              {"solves", t.solves}};
  sim["solver"] = t.approximate() ? "approximate" : "exact";
  if (t.approximate()) {
    sim["tolerance"] = t.tolerance;
    sim["flows_snapped"] = t.flows_snapped;
  }
  if (in.wall_time) {
    sim["wall_s"] = t.wall_s;
  }
  return sim;
}

}  // namespace

// Kind sections, one per workload kind (report_sections.cpp).
void kind_section(const ReportInput& in, Json& r);

Json make_report(const ReportInput& in) {
  Json r = setup_keys(in);
  Json results = Json::array();
  for (const work::CaseResult& c : in.result.cases) {
    Json one = {{"case", c.name}};
    one.update(case_summary(c, *in.result.cluster, in.wall_time));
    results.push_back(std::move(one));
  }
  if (in.result.cases.size() == 1) {
    Json only = case_summary(in.result.cases.front(), *in.result.cluster, in.wall_time);
    only.erase("sim");  // the totals below say the same
    r.update(only);
  }
  r["results"] = std::move(results);
  r["sim"] = sim_section(in);
  kind_section(in, r);
  return r;
}

}  // namespace hopsim::tools
