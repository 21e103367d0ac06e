// Reads the `flows` workload: explicit flows with ids, ranks, sizes, start times and `after`.
#pragma once

#include "tools/config/job_config.hpp"
#include "tools/config/node.hpp"
#include "workloads/jobs/flows_job.hpp"

namespace hopsim::config {

/// /workload of kind "flows". Rejects negative sizes and unknown or duplicate ids; ranks and
/// cycles are work::FlowsJob::check's.
template <>
work::FlowsJob parse_job<work::FlowsJob>(const Node& workload, const JobParseContext& ctx);

}  // namespace hopsim::config
