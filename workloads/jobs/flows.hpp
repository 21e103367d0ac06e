// The `flows` workload: explicit flows between GPU ranks, chained by `after`.
#pragma once

#include <string>
#include <vector>

#include "workloads/plan/plan.hpp"

namespace hopsim::work {

struct ExplicitFlow {
  std::string id;
  int src = 0;
  int dst = 0;
  Bytes bytes;
  Time start;                      ///< earliest start
  std::vector<std::size_t> after;  ///< indices of flows that must finish first
};

/// One plan task per flow, in the same order. A flow starts at max(start, finish of every
/// flow in `after`), then pays its route's latency, then moves its bytes.
Plan build_flows_plan(const std::vector<ExplicitFlow>& flows);

}  // namespace hopsim::work
