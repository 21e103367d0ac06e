// Reads the `collective` workload: op, algorithm, ranks or group, sizes, chunks, MoE routing.
#pragma once

#include "tools/config/job_config.hpp"
#include "tools/config/node.hpp"
#include "workloads/jobs/collective_job.hpp"

namespace hopsim::config {

/// /workload of kind "collective". `bytes` is a size, a list of sizes, or {"min", "max",
/// "factor"} (nccl-tests -b -e -f). Which ranks exist and which algorithms implement which op
/// is work::CollectiveJob::check's.
template <>
work::CollectiveJob parse_job<work::CollectiveJob>(const Node& workload,
                                                   const JobParseContext& ctx);

}  // namespace hopsim::config
