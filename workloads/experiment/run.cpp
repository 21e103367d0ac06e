// run(): check, build the cluster and the job's cases, simulate and summarize each case.
#include "workloads/experiment/run.hpp"

#include <algorithm>
#include <chrono>
#include <concepts>

#include <fmt/format.h>

#include "sim/problem.hpp"

namespace hopsim::work {
namespace {

// A job that measures probes before it builds its cases.
template <class J>
concept Probing = requires(const J& job, const BuildEnv& b, const Measured& m) {
  { job.probes(b) } -> std::same_as<std::vector<Probe>>;
  { job.cases(b, m) } -> std::same_as<std::vector<Case>>;
};

// Samples the load of a few links at every re-solve, keeping only changes.
class LinkLoadRecorder final : public RunObserver {
 public:
  explicit LinkLoadRecorder(const std::vector<topo::LinkId>& links) {
    for (topo::LinkId l : links) {
      loads_.push_back({l, {}});
    }
  }
  void on_rates(Time now, const sim::FlowNetwork& network) override {
    for (LinkLoad& load : loads_) {
      const double bytes_per_s = network.load_bytes_per_s(load.link);
      if (!load.samples.empty() && load.samples.back().first == now) {
        load.samples.back().second = bytes_per_s;
      } else if (load.samples.empty() || load.samples.back().second != bytes_per_s) {
        load.samples.emplace_back(now, bytes_per_s);
      }
    }
  }
  std::vector<LinkLoad> take() { return std::move(loads_); }

 private:
  std::vector<LinkLoad> loads_;
};

// The `count` links that the plan's flows keep busiest: the most bytes for their bandwidth
// (ties: lower id first).
std::vector<topo::LinkId> busiest_links(const topo::Cluster& cluster, const Plan& plan,
                                        std::size_t count) {
  std::vector<double> busy(cluster.link_count(), 0.0);  // seconds at the full rate
  for (const PlanTask& t : plan.tasks()) {
    if (t.kind != PlanTaskKind::Flow || t.src == t.dst) {
      continue;
    }
    const std::span<const topo::LinkId> given = plan.explicit_route(t);
    const topo::Route route = given.empty() ? cluster.route(t.src, t.dst) : topo::Route{};
    for (topo::LinkId l : given.empty() ? route.span() : given) {
      busy[l] += static_cast<double>(t.bytes.n) / cluster.link(l).bandwidth.bytes_per_s;
    }
  }
  std::vector<topo::LinkId> links;
  for (topo::LinkId l = 0; l < busy.size(); ++l) {
    if (busy[l] > 0) {
      links.push_back(l);
    }
  }
  const std::size_t keep = std::min(count, links.size());
  std::partial_sort(links.begin(), links.begin() + static_cast<std::ptrdiff_t>(keep), links.end(),
                    [&](topo::LinkId a, topo::LinkId b) {
                      return busy[a] != busy[b] ? busy[a] > busy[b] : a < b;
                    });
  links.resize(keep);
  return links;
}

CaseResult simulate_case(const topo::Cluster& cluster, Case c, double tolerance,
                         const RunOptions& options) {
  CaseResult r{std::move(c.name), std::move(c.choice), std::move(c.metrics), std::move(c.plan),
               {}, {}, {}, std::move(c.details), c.throughput};
  if (options.watch_links > 0) {
    LinkLoadRecorder recorder(busiest_links(cluster, r.plan, options.watch_links));
    r.outcome = simulate(cluster, r.plan, {.observer = &recorder, .tolerance = tolerance});
    r.link_loads = recorder.take();
  } else {
    r.outcome = simulate(cluster, r.plan, {.tolerance = tolerance});
  }
  r.summary = summarize(cluster, r.plan, r.outcome);
  return r;
}

}  // namespace

std::size_t RunResult::stuck() const {
  std::size_t n = 0;
  for (const CaseResult& c : cases) {
    n += c.outcome.stuck.size();
  }
  return n;
}

RunResult run(const Experiment& e, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  RunResult result;
  result.problems = check(e);
  if (result.problems.empty() && !is_simulated(e.job)) {
    result.problems.push_back(
        {"/workload/kind", fmt::format("workload kind \"{}\" is not simulated yet; `hopsim "
                                       "explain` gives its closed-form numbers",
                                       kind_name(e.job))});
  }
  if (!result.problems.empty()) {
    return result;
  }
  result.cluster.emplace(e.cluster);
  const Mesh mesh(e.parallel);
  const JobEnv env{.cluster = e.cluster,
                   .nccl = e.nccl,
                   .mesh = mesh,
                   .model = e.model ? &*e.model : nullptr,
                   .seed = e.seed,
                   .deepep = &e.deepep};
  std::optional<ComputeModel> compute;
  if (e.cluster.gpu.peak_bf16_tflops > 0 && e.cluster.gpu.peak_fp8_tflops > 0 &&
      e.cluster.gpu.hbm_GBps > 0) {
    compute.emplace(compute_model(e));
  }
  const BuildEnv build{env, *result.cluster, compute ? &*compute : nullptr};
  std::vector<Case> cases;
  try {
    cases = std::visit(
        [&](const auto& job) -> std::vector<Case> {
          if constexpr (Probing<std::decay_t<decltype(job)>>) {
            result.probes = run_probes(*result.cluster, job.probes(build), e.solver_tolerance,
                                       options.probe_threads);
            return job.cases(build, Measured(result.probes));
          } else if constexpr (std::decay_t<decltype(job)>::kSimulated) {
            return job.cases(build);
          } else {
            return {};
          }
        },
        e.job);
  } catch (const LimitError& limit) {
    result.problems.push_back({limit.path(), limit.what()});
    result.probes.clear();
    return result;
  }
  for (Case& c : cases) {
    result.cases.push_back(
        simulate_case(*result.cluster, std::move(c), e.solver_tolerance, options));
    if (options.on_case) {
      options.on_case(result.cases.size() - 1, cases.size(), result.cases.back());
    }
  }
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace hopsim::work
