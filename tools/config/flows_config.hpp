// Reads the `flows` workload: explicit flows with ids, ranks, sizes, start times and `after`.
#pragma once

#include <vector>

#include "tools/config/node.hpp"
#include "workloads/jobs/flows.hpp"

namespace hopsim::config {

/// Parses /workload of kind "flows" for a cluster of `gpus` ranks. Rejects ranks out of range,
/// negative sizes, unknown or duplicate ids, and cycles in `after`.
std::vector<work::ExplicitFlow> parse_flows(const Node& workload, int gpus);

}  // namespace hopsim::config
