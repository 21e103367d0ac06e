// The `flows` workload: explicit flows between GPU ranks, chained by `after`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/env/job_env.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

struct ExplicitFlow {
  std::string id;
  int src = 0;
  int dst = 0;
  Bytes bytes;
  Time start;                      ///< earliest start
  std::vector<std::size_t> after;  ///< indices of flows that must finish first
};

struct FlowsJob {
  static constexpr std::string_view kKind = "flows";
  static constexpr bool kSimulated = true;

  std::vector<ExplicitFlow> flows;
  std::string source;  ///< the CSV file the flows were read from; empty: the experiment's JSON

  /// At least one flow; GPUs of the cluster; src != dst; `after` without cycles; and a bound
  /// on the simulated time, so that every time fits in Time.
  void check(const JobEnv& env, Problems& out) const;
  /// One case: one plan task per flow, in the same order, labelled with the flow's id.
  std::vector<Case> cases(const BuildEnv& env) const;
  /// Bytes its plan takes to build and simulate: kBytesPerPlanFlow per flow, kBytesPerPlanTask
  /// per dependency.
  double estimated_plan_bytes(const JobEnv& env) const;
};

/// The plan of `flows`: a flow starts at max(start, finish of every flow in `after`), then pays
/// its route's latency, then moves its bytes.
Plan build_flows_plan(const std::vector<ExplicitFlow>& flows);

}  // namespace hopsim::work
