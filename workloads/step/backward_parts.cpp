// A backward's input and weight parts (backward_parts.hpp).
#include "workloads/step/backward_parts.hpp"

#include <vector>

namespace hopsim::work {
bool weight_kernel(const PlanTask& t) {
  return t.kind == PlanTaskKind::Compute &&
         (t.kernel == KernelClass::GemmWgrad || t.kernel == KernelClass::GroupedWgrad);
}

Plan backward_part(const Plan& backward, OpWork part) {
  if (part != OpWork::BackwardInput && part != OpWork::Weight) {
    return backward;
  }
  const bool weight = part == OpWork::Weight;
  std::vector<char> keep;
  keep.reserve(backward.tasks().size());
  for (const PlanTask& t : backward.tasks()) {
    keep.push_back(static_cast<char>(weight_kernel(t) == weight));
  }
  return backward.subset(keep, !weight);
}

}  // namespace hopsim::work
