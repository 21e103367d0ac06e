// The `collective` workload: one collective over a list of sizes, nccl-tests style.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "topology/cluster.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/collectives/moe_routing.hpp"
#include "workloads/plan/runner.hpp"

namespace hopsim::work {

enum class CollectiveOp { SendRecv, AllGather, ReduceScatter, AllReduce, AllToAll };
enum class CollectiveAlgorithm { Ring, Direct, Flat, TwoTier };

struct CollectiveJob {
  CollectiveOp op = CollectiveOp::AllGather;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  std::vector<int> ranks;    ///< in ring order; send_recv uses the first two
  std::vector<Bytes> sizes;  ///< nccl-tests "size": bytes per rank (all-gather: output)
  int chunks = 1;
  CollectiveLatency latency;
  /// all_to_all only: route MoE tokens instead of a uniform matrix (sizes are then ignored).
  std::optional<MoeRouting> moe;
};

/// nccl-tests' busbw / algbw: 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
/// reduce-scatter and all-to-all, 1 for send/recv.
double busbw_factor(CollectiveOp op, int n);

const char* op_name(CollectiveOp op);
const char* algorithm_name(CollectiveAlgorithm a);

/// Builds the plan of one collective of `size` bytes (per rank) for `job`.
Plan build_collective_plan(const topo::Cluster& cluster, const CollectiveJob& job, Bytes size);

/// Bytes that cross InfiniBand if the same all-to-all went flat (every pair on its own),
/// for comparison with two-tier; 0 for other ops.
std::int64_t flat_ib_bytes(const topo::Cluster& cluster, const CollectiveJob& job, Bytes size);

}  // namespace hopsim::work
