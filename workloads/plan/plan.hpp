// A plan: the task graph a workload builds (flows between GPUs, compute on GPUs, dependencies).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/units.hpp"

namespace hopsim::work {

using PlanTaskId = std::uint32_t;

enum class PlanTaskKind : std::uint8_t { Flow, Compute, Delay };

struct PlanTask {
  PlanTaskKind kind = PlanTaskKind::Flow;
  int src = 0;  ///< the GPU that sends (flow) or computes (compute)
  int dst = 0;  ///< the GPU that receives (flow)
  Bytes bytes;
  Time duration;       ///< compute or delay: how long it takes
  Time not_before;     ///< earliest start
  /// A flow pays this latency instead of its route's (collectives follow NCCL's cost model).
  std::optional<Time> latency;
  std::uint32_t phase = 0;
};

/// Phases group tasks for the report ("dispatch", "attention", ...) with a pass (fwd, bwd).
struct Phase {
  std::string name;
  std::string pass;
};

/// Data, not behaviour: workloads and collectives append to it; the runner executes it.
class Plan {
 public:
  Plan() { phases_.push_back(Phase{"main", "fwd"}); }

  std::uint32_t add_phase(std::string name, std::string pass);
  PlanTaskId add_flow(int src, int dst, Bytes bytes, std::uint32_t phase = 0);
  PlanTaskId add_compute(int gpu, Time duration, std::uint32_t phase = 0);
  /// A fixed delay that holds no resource (a collective's launch latency, say).
  PlanTaskId add_delay(int gpu, Time duration, std::uint32_t phase = 0);
  void set_latency(PlanTaskId flow, Time latency) { tasks_[flow].latency = latency; }
  /// `task` starts after `before` ends.
  void add_dependency(PlanTaskId before, PlanTaskId task) { deps_.emplace_back(before, task); }
  void set_not_before(PlanTaskId task, Time at) { tasks_[task].not_before = at; }

  const std::vector<PlanTask>& tasks() const { return tasks_; }
  const std::vector<std::pair<PlanTaskId, PlanTaskId>>& dependencies() const { return deps_; }
  const std::vector<Phase>& phases() const { return phases_; }
  void reserve(std::size_t tasks) { tasks_.reserve(tasks); }

 private:
  std::vector<PlanTask> tasks_;
  std::vector<std::pair<PlanTaskId, PlanTaskId>> deps_;
  std::vector<Phase> phases_;
};

}  // namespace hopsim::work
