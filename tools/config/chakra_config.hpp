// Reads the `chakra` workload: the trace's files (read and checked here, through tools/chakra),
// the GPU of each rank, the process groups, where kernel times come from, the algorithms.
#pragma once

#include "tools/config/job_config.hpp"
#include "tools/config/node.hpp"
#include "workloads/trace/chakra_job.hpp"

namespace hopsim::config {

/// /workload of kind "chakra". A trace file that cannot be replayed (truncated, an unknown node
/// type or attribute, a rank missing) is a ConfigError naming the file, rank and node; how the
/// ranks fit together (groups, pairs, cycles) is work::ChakraJob::check's.
template <>
work::ChakraJob parse_job<work::ChakraJob>(const Node& workload, const JobParseContext& ctx);

}  // namespace hopsim::config
