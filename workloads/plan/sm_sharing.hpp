// SMs shared between an exchange's communication kernels and the compute beside it: a plan whose
// exchanges hold SMs (Plan::sm_share) runs twice, the second time with each kernel slowed for
// the time it ran beside an exchange in the first
// (docs/expert-parallelism.md#overlap-and-communication-sms).
#pragma once

#include <vector>

#include "topology/cluster.hpp"
#include "workloads/plan/plan.hpp"
#include "workloads/plan/runner.hpp"

namespace hopsim::work {

/// Whether task `t` of `plan` is part of an exchange, holding its GPUs' SMs while it runs: a
/// flow between two GPUs, or a fixed cost (delay, hold), in a dispatch or combine phase.
bool holds_sms(const Plan& plan, const PlanTask& t);

/// Each compute kernel's duration as it runs beside the exchanges that `untaxed` (a run of
/// `plan` with these durations) shows on its GPU: from its start there, at speed
/// (sms - held) / sms while an exchange of its GPU runs and at full speed otherwise, until it
/// has done the work of its untaxed time. A kernel wholly beside an exchange that outlasts it
/// takes sms / (sms - held) of its time; one beside none keeps its time. The kernels' starts
/// are the untaxed run's (one step of the fixed point: the exchanges' own times move little).
/// Returns, per GPU, the time the kernels' durations grew by.
std::vector<Time> tax_beside_exchanges(Plan& plan, const Outcome& untaxed,
                                       const ComputeSpeeds* speeds);

/// Per GPU, how long its exchanges' kernels ran (and held its SMs) in `run`, a run of `plan`.
std::vector<Time> sm_held_times(const Plan& plan, const Outcome& run);

/// simulate(), and where `plan`'s exchanges hold SMs, first untaxed, then again after
/// tax_beside_exchanges (which `plan` keeps); the outcome is the second run's, its events,
/// solves and wall time both runs', its sm_tax what the tax added.
Outcome simulate_sharing_sms(const topo::Cluster& cluster, Plan& plan,
                             const SimulateOptions& options);

}  // namespace hopsim::work
