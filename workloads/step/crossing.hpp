// Activations crossing between pipeline stages, shared by the 1F1B/interleaved and DualPipe
// plans.
#pragma once

#include <cstdint>

#include "sim/units.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

/// `before` on GPU `from`, then `after` on GPU `to` once `bytes` have crossed: through a flow
/// in `phase` when bytes cross between two GPUs, a plain dependency otherwise.
inline void add_crossing(Plan& plan, topo::GpuId from, topo::GpuId to, Bytes bytes,
                         PlanTaskId before, PlanTaskId after, std::uint32_t phase) {
  if (bytes.n == 0 || from == to) {
    plan.add_dependency(before, after);
    return;
  }
  const PlanTaskId flow = plan.add_flow(from, to, bytes, phase);
  plan.add_dependency(before, flow);
  plan.add_dependency(flow, after);
}

}  // namespace hopsim::work
