// A plan's length without some of its tasks, from a simulation of the whole plan: each task
// that stays takes as long as it took there and starts when what it waits for has ended. What
// a layer's backward takes once its weight-gradient kernels are deferred (the input part a
// zero-bubble schedule runs), without simulating that part again.
#pragma once

#include <span>

#include "workloads/plan/plan.hpp"
#include "workloads/plan/runner.hpp"

namespace hopsim::work {

/// The makespan of `plan` with the tasks `drop` marks (one flag per task) taking no time, each
/// other task as long as it took in `outcome` (a flow its latency and transfer as they were
/// shared then, a kernel its time) and starting at its not_before and once every task it waits
/// for has ended: its dependencies (through dropped tasks too) and the task before it on its
/// GPU's stream that is not dropped. An estimate: the flows keep the rates they had beside the
/// dropped tasks.
Time makespan_without(const Plan& plan, const Outcome& outcome, std::span<const char> drop);

}  // namespace hopsim::work
