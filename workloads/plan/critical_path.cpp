// A plan's length without some of its tasks, from one simulation (critical_path.hpp).
#include "workloads/plan/critical_path.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "sim/assert.hpp"

namespace hopsim::work {
namespace {

// Each task's predecessors: its dependencies, and the task before it on its GPU's stream
// among those that stay (compute and holds run on streams, in the order they were added).
std::vector<std::vector<PlanTaskId>> predecessors(const Plan& plan, std::span<const char> drop) {
  const auto& tasks = plan.tasks();
  std::vector<std::vector<PlanTaskId>> before(tasks.size());
  for (const auto& [b, t] : plan.dependencies()) {
    before[t].push_back(b);
  }
  std::map<std::pair<topo::GpuId, StreamIndex>, PlanTaskId> last_on;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const PlanTask& t = tasks[i];
    if (drop[i] != 0 || (t.kind != PlanTaskKind::Compute && t.kind != PlanTaskKind::Hold)) {
      continue;
    }
    const auto [it, fresh] = last_on.try_emplace({t.src, t.stream}, static_cast<PlanTaskId>(i));
    if (!fresh) {
      before[i].push_back(it->second);
      it->second = static_cast<PlanTaskId>(i);
    }
  }
  return before;
}

}  // namespace

Time makespan_without(const Plan& plan, const Outcome& outcome, std::span<const char> drop) {
  const auto& tasks = plan.tasks();
  HOPSIM_ASSERT(drop.size() == tasks.size() && outcome.times.size() == tasks.size(),
                "{} flags and {} times for {} tasks", drop.size(), outcome.times.size(),
                tasks.size());
  const std::vector<std::vector<PlanTaskId>> before = predecessors(plan, drop);
  std::vector<std::vector<PlanTaskId>> after(tasks.size());
  std::vector<std::size_t> waiting(tasks.size(), 0);
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    for (const PlanTaskId b : before[t]) {
      after[b].push_back(static_cast<PlanTaskId>(t));
    }
    waiting[t] = before[t].size();
  }
  std::vector<PlanTaskId> ready;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    if (waiting[t] == 0) {
      ready.push_back(static_cast<PlanTaskId>(t));
    }
  }
  std::vector<Time> end(tasks.size());
  Time makespan;
  for (std::size_t k = 0; k < ready.size(); ++k) {  // Kahn's order
    const PlanTaskId t = ready[k];
    Time start = drop[t] != 0 ? Time{} : tasks[t].not_before;
    for (const PlanTaskId b : before[t]) {
      start = std::max(start, end[b]);
    }
    const sim::TaskTimes& ran = outcome.times[t];
    end[t] = drop[t] != 0 ? start : start + (ran.end - ran.start);
    makespan = std::max(makespan, end[t]);
    for (const PlanTaskId a : after[t]) {
      if (--waiting[a] == 0) {
        ready.push_back(a);
      }
    }
  }
  HOPSIM_ASSERT(ready.size() == tasks.size(), "a plan with a cycle ({} of {} tasks ordered)",
                ready.size(), tasks.size());
  return makespan;
}

}  // namespace hopsim::work
