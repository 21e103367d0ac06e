// Explicit flows to a plan.
#include "workloads/jobs/flows.hpp"

namespace hopsim::work {

Plan build_flows_plan(const std::vector<ExplicitFlow>& flows) {
  Plan plan;
  plan.add_phase("flows", "fwd");
  plan.reserve(flows.size());
  for (const ExplicitFlow& f : flows) {
    const PlanTaskId t = plan.add_flow(f.src, f.dst, f.bytes);
    plan.set_not_before(t, f.start);
  }
  for (std::size_t i = 0; i < flows.size(); ++i) {
    for (std::size_t before : flows[i].after) {
      plan.add_dependency(static_cast<PlanTaskId>(before), static_cast<PlanTaskId>(i));
    }
  }
  return plan;
}

}  // namespace hopsim::work
