// Executes a plan on a cluster: routes its flows (once), runs the engine, returns the times.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sim/executor.hpp"
#include "topology/cluster.hpp"
#include "workloads/compute/compute_speeds.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

/// Sees a run as it happens (a tracer drawing link utilization, a test checking rates).
class RunObserver {
 public:
  RunObserver() = default;
  RunObserver(const RunObserver&) = default;
  RunObserver& operator=(const RunObserver&) = default;
  virtual ~RunObserver();
  virtual void on_task_start(PlanTaskId /*task*/, Time /*now*/) {}
  virtual void on_task_end(PlanTaskId /*task*/, Time /*now*/) {}
  /// After every re-solve of flow rates; `network.load_bytes_per_s(link)` is current.
  virtual void on_rates(Time /*now*/, const sim::FlowNetwork& /*network*/) {}
};

struct Outcome {
  std::vector<sim::TaskTimes> times;  ///< per plan task, same index
  std::vector<Time> latency;          ///< per plan task: what a flow paid before moving bytes
  /// The links each flow crossed, as simulated: route(task) (empty for other tasks).
  std::vector<topo::LinkId> route_links;
  std::vector<std::uint32_t> route_begin;  ///< per plan task, and one past the last
  Time makespan;
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  std::uint64_t solves = 0;
  std::uint64_t classes_solved = 0;  ///< groups of flows whose rates the solver re-filled
  std::uint64_t flows_snapped = 0;   ///< flows the approximate mode finished early (or late)
  sim::FairShareStats solver;        ///< the solver's structural counters
  double wall_s = 0;
  std::vector<PlanTaskId> stuck;  ///< tasks that never ran (a dependency cycle)
  /// Per GPU, the compute time that the SMs its exchanges held added (simulate_sharing_sms);
  /// empty where the plan's exchanges hold none.
  std::vector<Time> sm_tax;

  std::span<const topo::LinkId> route(PlanTaskId task) const {
    return {route_links.data() + route_begin[task], route_begin[task + 1] - route_begin[task]};
  }
};

struct SimulateOptions {
  RunObserver* observer = nullptr;
  /// The flow solver's approximate mode (sim::FlowNetwork::set_tolerance); 0 is exact.
  double tolerance = 0;
  /// The speeds its GPUs compute at (ComputeSpeeds::kernel_speed, per kernel); null: every GPU
  /// at the compute model's rate (a plan whose compute carries its GPUs' speeds already).
  const ComputeSpeeds* speeds = nullptr;
};

/// The links flow `t` crosses: through the NICs alone where the plan says so
/// (PlanTask::nics_only), else the topology's route. t.src != t.dst.
inline topo::Route route_of(const topo::Cluster& cluster, const PlanTask& t) {
  return t.nics_only ? cluster.nic_route(t.src, t.dst) : cluster.route(t.src, t.dst);
}

/// Task `i` (its index in its plan) `t`'s time on its GPU as simulate() runs it: a kernel's
/// time in the plan at the GPU's speed for it (ComputeSpeeds::kernel_speed: its perturbations,
/// its own drawn speed where the GPU draws one per kernel, its model's rate for the kernel's
/// class), rounded up; every other task, and every task when `speeds` is null, its own.
Time time_on_gpu(const ComputeSpeeds* speeds, const PlanTask& t, std::size_t i);

/// Runs `plan` to completion. Flows take route_of's links; a flow from a GPU to itself takes
/// no time and no link. Compute tasks run on stream (gpu, stream), each at its GPU's speed for
/// it (options.speeds).
Outcome simulate(const topo::Cluster& cluster, const Plan& plan, const SimulateOptions& options);
inline Outcome simulate(const topo::Cluster& cluster, const Plan& plan,
                        RunObserver* observer = nullptr) {
  return simulate(cluster, plan, SimulateOptions{.observer = observer});
}

}  // namespace hopsim::work
