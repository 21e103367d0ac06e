// Executes a plan on a cluster: routes its flows, runs the engine, returns the task times.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/executor.hpp"
#include "topology/cluster.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

struct Outcome {
  std::vector<sim::TaskTimes> times;  ///< per plan task, same index
  std::vector<Time> latency;          ///< per plan task: what a flow paid before moving bytes
  Time makespan;
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  std::uint64_t solves = 0;
  double wall_s = 0;
  std::vector<PlanTaskId> stuck;  ///< tasks that never ran (a dependency cycle)
};

/// Runs `plan` to completion. A flow from a GPU to itself takes no time and no link.
Outcome simulate(const topo::Cluster& cluster, const Plan& plan);

}  // namespace hopsim::work
