// Phases summed by name over their passes, then sorted by the time they take.
#include "workloads/plan/time_shares.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace hopsim::work {

// Sums each phase name's compute and exposed time in plan order, then sorts the shares.
TimeShares time_shares(const Plan& plan, const Summary& summary) {
  TimeShares out;
  out.step_s = summary.step.seconds();
  std::map<std::string, std::pair<double, double>> by_name;  // compute, exposed
  std::vector<std::string> order;  // names as they first appear
  for (std::size_t p = 0; p < summary.phases.size(); ++p) {
    const std::string name(plan.phases()[p].name());
    if (by_name.find(name) == by_name.end()) {
      order.push_back(name);
    }
    auto& [compute, exposed] = by_name[name];
    compute += summary.phases[p].compute.seconds();
    exposed += summary.phases[p].exposed.seconds();
  }
  for (const std::string& name : order) {
    const auto& [compute, exposed] = by_name[name];
    if (compute > 0) {
      out.parts.push_back({name, ShareKind::Computing, compute});
    }
    if (exposed > 0) {
      out.parts.push_back({name, ShareKind::WaitingOnNetwork, exposed});
    }
    out.busy_s += compute + exposed;
  }
  std::stable_sort(out.parts.begin(), out.parts.end(),
                   [](const TimeShare& a, const TimeShare& b) { return a.seconds > b.seconds; });
  out.idle_s = out.step_s - out.busy_s;
  return out;
}

}  // namespace hopsim::work
