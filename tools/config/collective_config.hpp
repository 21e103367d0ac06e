// Reads the `collective` workload: op, algorithm, ranks, sizes, chunks, MoE routing.
#pragma once

#include "tools/config/node.hpp"
#include "workloads/jobs/collective_job.hpp"

namespace hopsim::config {

/// Parses /workload of kind "collective" on a cluster of `gpus` ranks (`gpus_per_node` each).
/// `bytes` is a size, a list of sizes, or {"min", "max", "factor"} (nccl-tests -b -e -f).
work::CollectiveJob parse_collective(const Node& workload, int gpus, int gpus_per_node,
                                     const work::CollectiveLatency& latency);

}  // namespace hopsim::config
