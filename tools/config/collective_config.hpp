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

/// Expert popularity, `distribution` and `zipf_s`, where a routing spec has them (the
/// collective's moe block, the MoE layer's routing block).
void parse_popularity(const Node& n, work::MoeRouting& routing);

}  // namespace hopsim::config
