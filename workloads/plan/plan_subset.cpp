// A plan's marked tasks as a plan of their own (Plan::subset): what is left of a layer's
// backward without its weight-gradient kernels, or those kernels alone.
#include <algorithm>
#include <vector>

#include "sim/assert.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {
namespace {

// The tasks in an order where every task comes after those it waits for (Kahn's).
std::vector<PlanTaskId> topological(std::size_t n,
                                    const std::vector<std::pair<PlanTaskId, PlanTaskId>>& deps,
                                    std::vector<std::vector<PlanTaskId>>& before) {
  std::vector<std::vector<PlanTaskId>> after(n);
  std::vector<std::size_t> waiting(n, 0);
  before.assign(n, {});
  for (const auto& [b, t] : deps) {
    after[b].push_back(t);
    before[t].push_back(b);
    ++waiting[t];
  }
  std::vector<PlanTaskId> order;
  for (std::size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) {
      order.push_back(static_cast<PlanTaskId>(i));
    }
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    for (const PlanTaskId t : after[order[k]]) {
      if (--waiting[t] == 0) {
        order.push_back(t);
      }
    }
  }
  HOPSIM_ASSERT(order.size() == n, "a plan with a dependency cycle ({} of {} tasks ordered)",
                order.size(), n);
  return order;
}

}  // namespace

Plan Plan::subset(std::span<const char> keep, bool dependencies) const {
  HOPSIM_ASSERT(keep.size() == tasks_.size(), "{} flags for {} tasks", keep.size(), tasks_.size());
  std::vector<std::vector<PlanTaskId>> before;
  const std::vector<PlanTaskId> order = topological(tasks_.size(), deps_, before);
  Plan out = *this;
  out.tasks_.clear();
  out.deps_.clear();
  // Per task, the kept tasks it waits for (itself, where kept, for those after it).
  std::vector<std::vector<PlanTaskId>> frontier(tasks_.size());
  std::vector<std::vector<PlanTaskId>> waits(tasks_.size());
  for (const PlanTaskId t : order) {
    for (const PlanTaskId b : before[t]) {
      waits[t].insert(waits[t].end(), frontier[b].begin(), frontier[b].end());
    }
    std::sort(waits[t].begin(), waits[t].end());
    waits[t].erase(std::unique(waits[t].begin(), waits[t].end()), waits[t].end());
    frontier[t] = keep[t] != 0 ? std::vector<PlanTaskId>{t} : waits[t];
  }
  // Kept tasks in their own order (a stream runs its tasks in the order they were added).
  std::vector<PlanTaskId> new_id(tasks_.size(), 0);
  for (std::size_t t = 0; t < tasks_.size(); ++t) {
    if (keep[t] != 0) {
      new_id[t] = static_cast<PlanTaskId>(out.tasks_.size());
      out.tasks_.push_back(tasks_[t]);
    }
  }
  for (std::size_t t = 0; t < tasks_.size() && dependencies; ++t) {
    if (keep[t] != 0) {
      for (const PlanTaskId w : waits[t]) {
        out.deps_.emplace_back(new_id[w], new_id[t]);
      }
    }
  }
  return out;
}

}  // namespace hopsim::work
