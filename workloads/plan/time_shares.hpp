// Where the busiest rank's step goes: each phase's compute and exposed communication (its
// passes together) as shares of the step, and the rest, which the rank spends idle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/plan/plan.hpp"
#include "workloads/plan/summary.hpp"

namespace hopsim::work {

/// What a phase's share of the step is spent on.
enum class ShareKind : std::uint8_t {
  Computing,         ///< its compute
  WaitingOnNetwork,  ///< its communication not hidden under compute
};

/// One phase's compute or exposed communication on the critical rank, over all its passes.
struct TimeShare {
  std::string phase;
  ShareKind kind = ShareKind::Computing;
  double seconds = 0;
};

/// The critical rank's step split into shares: each phase name's compute and exposed
/// communication (those that are not zero), largest first, phases in plan order among equals;
/// `busy_s` is their sum; `idle_s` the rest of the step, when the rank waits with nothing of
/// its own running (for another GPU, or a dependency).
struct TimeShares {
  double step_s = 0;
  std::vector<TimeShare> parts;
  double busy_s = 0;
  double idle_s = 0;
};

/// The shares of `summary`'s step; `plan` names its phases.
TimeShares time_shares(const Plan& plan, const Summary& summary);

}  // namespace hopsim::work
