// run(): an experiment in, results out. No IO; deterministic; safe to call from several
// threads at once on different experiments (nothing is shared between calls).
#pragma once

#include <any>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/problem.hpp"
#include "topology/cluster.hpp"
#include "workloads/experiment/experiment.hpp"
#include "workloads/layer/case_details.hpp"
#include "workloads/plan/plan.hpp"
#include "workloads/plan/probe.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/summary.hpp"
#include "workloads/step/step_details.hpp"

namespace hopsim::work {

struct CaseResult;

/// Links whose load over time a report describes (the busiest for their bandwidth).
inline constexpr std::size_t kReportLinks = 4;

/// Where a case's simulation is, for progress.
struct SimProgress {
  std::string_view what;  ///< the case's name
  Time now;               ///< simulated time so far
  std::size_t tasks_done = 0;
  std::size_t tasks = 0;  ///< the plan's
};

struct RunOptions {
  /// Record the load over time of this many links, the busiest for their bandwidth (a report
  /// describes the first kReportLinks; a trace may draw more; 0 saves the sampling).
  std::size_t watch_links = kReportLinks;
  /// Called as each case ends (index from 0, count), for progress; run() itself does no IO.
  std::function<void(std::size_t, std::size_t, const CaseResult&)> on_case;
  /// Threads that simulate a job's probes (0: one per core); results do not depend on it.
  unsigned probe_threads = 0;
  /// Called from the simulating thread every few thousand tasks of a case (not of probes)
  /// while it runs; results do not depend on it.
  std::function<void(const SimProgress&)> on_progress;
  /// Memory a plan may take, as its job estimates it before building it (0: no limit); a
  /// larger one is a problem at the key that makes it large, naming the limit and where it
  /// came from (`memory_limit_source`, e.g. " (--max-memory)") and ending with `memory_hint`.
  double memory_limit_bytes = 0;
  std::string memory_limit_source;
  std::string memory_hint;
};

/// A link's load (bytes/s) from each instant it changed until the next.
struct LinkLoad {
  topo::LinkId link;
  std::vector<std::pair<Time, double>> samples;
};

/// One simulated case (one size of a collective): its plan, what happened, and the summary.
struct CaseResult {
  std::string name;
  std::string choice;  ///< what the job chose for this case (a collective's algorithm/protocol)
  std::vector<std::pair<std::string, double>> metrics;  ///< figures of the case's input
  Plan plan;
  Outcome outcome;
  Summary summary;
  std::vector<LinkLoad> link_loads;  ///< with RunOptions::watch_links
  std::any details;                  ///< what the kind's report section needs (Case::details)
  std::optional<Throughput> throughput;  ///< steps and layers: GPUs, tokens, model FLOPs
  /// Units of the run per unit its plan holds (a MoE layer's repeated layers, Repeat: layers
  /// over layers simulated), by which figures read off the plan's flows (bytes per exchange or
  /// link) are the run's; 1 otherwise. The summary is the run's already.
  double plan_scale = 1;

  const CpDetails* cp() const { return cp_details(details); }
  const EpDetails* ep() const { return ep_details(details); }
  const StepDetails* step() const { return step_details(details); }
};

struct RunResult {
  /// Why the experiment could not run (nothing else is set then).
  Problems problems;
  std::optional<topo::Cluster> cluster;
  std::vector<CaseResult> cases;
  /// What the job measured before building its cases (a folded step's layers and syncs).
  std::vector<ProbeResult> probes;
  double wall_s = 0;  ///< the only field that differs between runs

  bool ok() const { return problems.empty(); }
  /// Tasks that never ran, over all cases (a dependency cycle in a plan).
  std::size_t stuck() const;
};

/// Whether run() simulates `experiment`'s cases at its GPUs' speeds (ComputeSpeeds); false for
/// a folded step, whose plan carries them already (its measured layers and its stages' output
/// layer and optimizer).
bool cases_at_speeds(const Experiment& experiment);

/// Checks `experiment`, builds its cases and simulates each one.
RunResult run(const Experiment& experiment, const RunOptions& options = {});

}  // namespace hopsim::work
