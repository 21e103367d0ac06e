// run(): check, build the cluster and the job's cases, simulate and summarize each case.
#include "workloads/experiment/run.hpp"

#include <algorithm>
#include <chrono>
#include <concepts>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "sim/problem.hpp"
#include "workloads/ep/routing_cache.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/sm_sharing.hpp"
#include "workloads/step/partial_fold.hpp"
#include "workloads/step/schedule_choice.hpp"

namespace hopsim::work {
namespace {

// A job that measures probes before it builds its cases.
template <class J>
concept Probing = requires(const J& job, const BuildEnv& b, const Measured& m) {
  { job.probes(b) } -> std::same_as<std::vector<Probe>>;
  { job.cases(b, m) } -> std::same_as<std::vector<Case>>;
};

// A job that estimates the memory of its plans before building them.
template <class J>
concept Estimating = requires(const J& job, const JobEnv& env) {
  { job.estimated_plan_bytes(env) } -> std::same_as<double>;
};

// Where a plan too large for the memory limit is fixed, and how.
std::pair<std::string, std::string_view> too_large_fix(const Job& job) {
  return std::visit(
      Overloaded{
          [](const TrainingStepJob& j) -> std::pair<std::string, std::string_view> {
            if (j.fold) {
              return {"/parallel", "simulate fewer GPUs"};
            }
            return {"/workload/fold",
                    "fold the step (workload.fold, the default) or simulate fewer GPUs"};
          },
          [](const CollectiveJob&) -> std::pair<std::string, std::string_view> {
            return {"/workload", "simulate fewer ranks or sizes"};
          },
          [](const FlowsJob& j) -> std::pair<std::string, std::string_view> {
            return {std::string(j.flows_pointer()), "simulate fewer flows"};
          },
          [](const ChakraJob&) -> std::pair<std::string, std::string_view> {
            return {"/workload/trace", "simulate a smaller trace"};
          },
          [](const auto&) -> std::pair<std::string, std::string_view> {
            return {"/workload/layers", "simulate fewer layers or GPUs"};
          }},
      job);
}

// The problem of a job whose plan would take more than the limit (0: none): one line with the
// estimate and the limit. Every kind that builds plans estimates them before building.
std::optional<Problem> too_large(const Job& job, const JobEnv& env, const RunOptions& options) {
  if (options.memory_limit_bytes <= 0) {
    return std::nullopt;
  }
  const double bytes = std::visit(
      [&](const auto& j) -> double {
        using J = std::decay_t<decltype(j)>;
        static_assert(Estimating<J> || !J::kSimulated, "a simulated kind estimates its plans");
        if constexpr (Estimating<J>) {
          return j.estimated_plan_bytes(env);
        }
        return 0;
      },
      job);
  if (bytes <= options.memory_limit_bytes) {
    return std::nullopt;
  }
  auto [path, fix] = too_large_fix(job);
  return Problem{std::move(path),
                 fmt::format("this plan needs about {:.3g} GB to build and simulate, more than "
                             "the {:.3g} GB memory limit{}; {}{}",
                             bytes / 1e9, options.memory_limit_bytes / 1e9,
                             options.memory_limit_source, fix, options.memory_hint)};
}

// Reports a case's progress every kEvery tasks that end, passing everything on to `next`.
class ProgressObserver final : public RunObserver {
 public:
  static constexpr std::size_t kEvery = 4096;
  ProgressObserver(const RunOptions& options, const CaseResult& c, RunObserver* next)
      : options_(options), case_(c), next_(next) {}
  void on_task_start(PlanTaskId task, Time now) override {
    if (next_ != nullptr) {
      next_->on_task_start(task, now);
    }
  }
  void on_task_end(PlanTaskId task, Time now) override {
    if (next_ != nullptr) {
      next_->on_task_end(task, now);
    }
    if (++done_ % kEvery == 0) {
      options_.on_progress({case_.name, now, done_, case_.plan.tasks().size()});
    }
  }
  void on_rates(Time now, const sim::FlowNetwork& network) override {
    if (next_ != nullptr) {
      next_->on_rates(now, network);
    }
  }

 private:
  const RunOptions& options_;
  const CaseResult& case_;
  RunObserver* next_;
  std::size_t done_ = 0;
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
      const double bytes_per_s = network.load_bytes_per_s(load.link.value());
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
    const topo::Route route = route_of(cluster, t);
    for (topo::LinkId l : route.span()) {
      busy[l.index()] += static_cast<double>(t.bytes.n) / cluster.link(l).bandwidth.bytes_per_s;
    }
  }
  std::vector<topo::LinkId> links;
  for (std::size_t l = 0; l < busy.size(); ++l) {
    if (busy[l] > 0) {
      links.emplace_back(static_cast<topo::LinkId::rep_type>(l));
    }
  }
  const std::size_t keep = std::min(count, links.size());
  std::partial_sort(links.begin(), links.begin() + static_cast<std::ptrdiff_t>(keep), links.end(),
                    [&](topo::LinkId a, topo::LinkId b) {
                      const double x = busy[a.index()];
                      const double y = busy[b.index()];
                      return x != y ? x > y : a < b;
                    });
  links.resize(keep);
  return links;
}

CaseResult simulate_case(const topo::Cluster& cluster, const ComputeSpeeds* speeds, Case c,
                         double tolerance, const RunOptions& options) {
  const CaseTraffic traffic = c.traffic;
  const std::optional<KernelTally> kernels = c.kernels;
  const std::optional<Repeat> repeat = std::move(c.repeat);
  CaseResult r{std::move(c.name), std::move(c.choice), std::move(c.metrics), std::move(c.plan),
               {}, {}, {}, std::move(c.details), c.throughput};
  std::optional<LinkLoadRecorder> recorder;
  if (options.watch_links > 0) {
    recorder.emplace(busiest_links(cluster, r.plan, options.watch_links));
  }
  RunObserver* const watch = recorder ? &*recorder : nullptr;
  std::optional<ProgressObserver> progress;
  if (options.on_progress) {
    progress.emplace(options, r, watch);
  }
  r.outcome = simulate_sharing_sms(
      cluster, r.plan,
      {.observer = progress ? &*progress : watch, .tolerance = tolerance, .speeds = speeds});
  if (recorder) {
    r.link_loads = recorder->take();
  }
  r.summary = summarize(cluster, r.plan, r.outcome);
  if (repeat) {
    r.summary = extrapolate(repeat->fewer,
                            at_rank(r.summary, r.plan, r.outcome, repeat->critical_rank),
                            repeat->total - repeat->simulated);
    r.plan_scale = static_cast<double>(repeat->total) / static_cast<double>(repeat->simulated);
  }
  if (traffic.counted) {
    r.summary.nvlink_bytes = traffic.nvlink;
    r.summary.ib_bytes = traffic.ib;
  }
  if (kernels) {  // a folded step: its plan computes on a few GPUs only (or none)
    r.summary.compute_kernels = *kernels;
    r.summary.flops = Flops{};
  }
  return r;
}

// The job's cases, after its probes (into `result`); none, with the problem in `result`, when
// a limit stops the building.
std::optional<std::vector<Case>> build_cases(const Experiment& e, const BuildEnv& build,
                                             const RunOptions& options, RunResult& result) {
  try {
    return std::visit(
        [&](const auto& job) -> std::vector<Case> {
          if constexpr (Probing<std::decay_t<decltype(job)>>) {
            std::vector<Probe> probes = job.probes(build);
            if (build.routings != nullptr) {  // the probes are built: no routing held as they run
              build.routings->clear();
            }
            result.probes = run_probes(*result.cluster, std::move(probes), e.solver_tolerance,
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
    return std::nullopt;
  }
}

}  // namespace

std::size_t RunResult::stuck() const {
  std::size_t n = 0;
  for (const CaseResult& c : cases) {
    n += c.outcome.stuck.size();
  }
  return n;
}

namespace {

RunResult run_one(const Experiment& e, const RunOptions& options);

// schedule "auto": each candidate checked and, where it passes, run; the fastest kept, with
// what was tried in its step details.
RunResult run_auto_schedule(const Experiment& e, const TrainingStepJob& job,
                            const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const Mesh mesh(e.parallel);
  const JobEnv env = job_env(e, mesh);
  RunOptions quiet = options;
  quiet.on_case = nullptr;
  std::vector<ScheduleTried> tried;
  std::optional<RunResult> best;
  for (const TrainingStepJob& candidate : schedule_candidates(job, env)) {
    Experiment one = e;
    one.job = candidate;
    RunResult r = run_one(one, quiet);  // checks the candidate first
    if (!r.ok()) {
      tried.push_back({schedule_label(candidate), 0,
                       fmt::format("{}: {}", r.problems.front().path, r.problems.front().message)});
      continue;
    }
    const double step_s = r.cases.front().outcome.makespan.seconds();
    tried.push_back({schedule_label(candidate), step_s, ""});
    if (!best || step_s < best->cases.front().outcome.makespan.seconds()) {
      best = std::move(r);
    }
  }
  if (!best) {
    RunResult none;
    none.problems = check(e);  // names every candidate's problem
    return none;
  }
  if (auto* details = std::any_cast<StepDetails>(&best->cases.front().details)) {
    details->schedules_tried = std::move(tried);
  }
  if (options.on_case) {
    for (std::size_t i = 0; i < best->cases.size(); ++i) {
      options.on_case(i, best->cases.size(), best->cases[i]);
    }
  }
  best->wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return std::move(*best);
}

}  // namespace

bool cases_at_speeds(const Experiment& e) {
  const auto* step = std::get_if<TrainingStepJob>(&e.job);
  return step == nullptr || !step->fold;
}

RunResult run(const Experiment& e, const RunOptions& options) {
  if (const auto* step = std::get_if<TrainingStepJob>(&e.job); step && step->schedule_auto) {
    Problems problems = check(e);
    if (!problems.empty()) {
      RunResult r;
      r.problems = std::move(problems);
      return r;
    }
    return run_auto_schedule(e, *step, options);
  }
  return run_one(e, options);
}

namespace {

RunResult run_one(const Experiment& e, const RunOptions& options) {
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
  // The GPUs' speeds, once; every plan reads them. A folded step runs its pipeline without
  // them and on its links alone (its measured layers carry its GPUs' speeds); its probes say
  // which cluster and speeds each runs on (partial_fold.hpp).
  const ComputeSpeeds speeds(e.cluster, e.gpu_types);
  const bool folded = !cases_at_speeds(e);
  result.cluster.emplace(folded ? step_parts::pipeline_cluster(e.cluster) : e.cluster);
  const Mesh mesh(e.parallel);
  const JobEnv env = job_env(e, mesh, &speeds);
  std::optional<ComputeModel> compute;
  if (e.cluster.gpu.peak_bf16_tflops > 0 && e.cluster.gpu.peak_fp8_tflops > 0 &&
      e.cluster.gpu.hbm_GBps > 0) {
    compute.emplace(compute_model(e));
  }
  if (std::optional<Problem> large = too_large(e.job, env, options)) {
    result.problems.push_back(std::move(*large));
    return result;
  }
  RoutingCache routings;  // the plans built next share the routings they make
  const BuildEnv build{env, *result.cluster, compute ? &*compute : nullptr, &routings};
  std::optional<std::vector<Case>> cases = build_cases(e, build, options, result);
  routings.clear();
  if (!cases) {
    return result;
  }
  for (Case& c : *cases) {
    result.cases.push_back(simulate_case(*result.cluster, folded ? nullptr : &speeds, std::move(c),
                                         e.solver_tolerance, options));
    if (options.on_case) {
      options.on_case(result.cases.size() - 1, cases->size(), result.cases.back());
    }
  }
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace

}  // namespace hopsim::work
