// A plan as a Chakra execution trace: what hopsim simulated, for ASTRA-sim or for hopsim's own
// replay. Every GPU of the plan becomes a rank (in GPU order); kernels and holds become COMP
// nodes on their stream, delays host ops (COMP with is_cpu_op), flows a COMM_SEND on the sender
// and a COMM_RECV on the receiver. A dependency between tasks of different GPUs that no flow
// carries becomes a message of no bytes, which a replay treats as ordering alone.
#pragma once

#include <vector>

#include "workloads/compute/compute_speeds.hpp"
#include "workloads/plan/plan.hpp"
#include "workloads/trace/et_trace.hpp"

namespace hopsim::work {

struct ExportedPlan {
  EtTrace trace;
  std::vector<int> gpus;  ///< the GPU of each rank
};

/// `plan` as ET nodes; a kernel's duration is its time on its GPU at `speeds`
/// (time_on_gpu: a perturbed GPU's kernels as long as the run simulated them), so that a
/// replay on the healthy cluster computes as slowly; null: the plan's own durations.
ExportedPlan export_plan(const Plan& plan, const ComputeSpeeds* speeds = nullptr);

}  // namespace hopsim::work
