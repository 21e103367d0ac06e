// Collectives as small DAGs of flows appended to a plan (no events, no state: data only).
//
// Closed forms on a uniform topology (per-step latency a, bandwidth B per GPU, n ranks,
// S bytes per rank in the nccl-tests "size" convention, one chunk):
//   send_recv                 a + S / B
//   all_gather, ring          (n-1) (a + ceil(S/n) / B)      [Thakur et al., IJHPCA 2005]
//   all_gather, direct        a + (n-1) ceil(S/n) / B         (every rank sends to all others)
//   reduce_scatter, ring      (n-1) (a + ceil(S/n) / B)
//   all_reduce, ring          2(n-1) (a + ceil(S/n) / B)     (reduce-scatter, then all-gather)
//   all_to_all, flat          a + (n-1) (S/n) / B            (through a non-blocking switch)
// plus NCCL's base latency once per collective. With k chunks a ring step is k flows of
// ceil(ceil(S/n)/k) bytes sent back to back on each link, each waiting for the chunk it
// forwards: on a uniform ring every link is busy from the first step, so the time becomes
// steps * k * (a + ceil(ceil(S/n)/k) / B): chunks pay the per-hop latency each and buy no
// bandwidth there; where links differ they shorten the tail a piece spends behind the slowest.
// Latencies follow NCCL's cost model
// (src/graph/tuning.cc): a base latency per collective, then a per-hop latency that depends on
// whether the hop stays in the node (NVLink) or crosses the network.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "topology/cluster.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

/// NCCL's latency model for one protocol.
struct CollectiveLatency {
  Time base = Time::ns(8'400);
  Time nvlink_hop = Time::ns(3'400);
  Time net_hop = Time::ns(14'000);
};

/// The tasks whose completion completes a collective; feed them to the next one's `after`.
struct Handle {
  std::vector<PlanTaskId> done;
};

/// A per-pair byte matrix over n ranks, row-major: bytes[i * n + j] goes from rank i to j.
struct ByteMatrix {
  std::size_t n = 0;
  std::vector<std::int64_t> bytes;
  std::int64_t at(std::size_t i, std::size_t j) const { return bytes[i * n + j]; }
};

/// Two-tier input: what each GPU needs from each GPU, and the distinct bytes each GPU sends to
/// each *node* (a token wanted by several GPUs of one node crosses InfiniBand once).
struct TwoTierMatrix {
  ByteMatrix gpu;                     ///< n x n
  std::size_t nodes = 0;
  std::vector<std::int64_t> to_node;  ///< n x nodes: distinct bytes from rank i to node k
};

class Collectives {
 public:
  Collectives(Plan& plan, const topo::Cluster& cluster, CollectiveLatency latency,
              std::uint32_t phase = 0)
      : plan_(plan), cluster_(cluster), latency_(latency), phase_(phase) {}

  Handle send_recv(int src, int dst, Bytes size, std::span<const PlanTaskId> after = {});
  Handle all_gather_ring(std::span<const int> ranks, Bytes size, int chunks = 1,
                         std::span<const PlanTaskId> after = {});
  Handle all_gather_direct(std::span<const int> ranks, Bytes size,
                           std::span<const PlanTaskId> after = {});
  Handle reduce_scatter_ring(std::span<const int> ranks, Bytes size, int chunks = 1,
                             std::span<const PlanTaskId> after = {});
  Handle all_reduce_ring(std::span<const int> ranks, Bytes size, int chunks = 1,
                         std::span<const PlanTaskId> after = {});
  /// Every pair (i, j), i != j, with bytes > 0 becomes one flow, all at once.
  Handle all_to_all_flat(std::span<const int> ranks, const ByteMatrix& m,
                         std::span<const PlanTaskId> after = {});
  /// Dispatch: data for another node crosses InfiniBand once, to the GPU of the same local
  /// index there, which forwards it over NVLink. With `combine`, the reverse: GPUs of a node
  /// send to that forwarding GPU over NVLink, it reduces, then one IB flow goes back.
  Handle all_to_all_two_tier(std::span<const int> ranks, const TwoTierMatrix& m,
                             bool combine = false, std::span<const PlanTaskId> after = {});

  /// The uniform matrix of an nccl-tests all-to-all of `size` bytes per rank.
  static ByteMatrix uniform(std::size_t n, Bytes size);
  /// Two-tier input where every byte for a node is distinct (no token wanted twice there).
  static TwoTierMatrix without_dedup(std::span<const int> ranks, const topo::Cluster& cluster,
                                     ByteMatrix gpu);

 private:
  Plan& plan_;
  const topo::Cluster& cluster_;
  CollectiveLatency latency_;
  std::uint32_t phase_;

  PlanTaskId start(std::span<const PlanTaskId> after);
  /// A flow after `after` with NCCL's per-hop latency and `label`.
  PlanTaskId flow(int src, int dst, std::int64_t bytes, PlanTaskId after, std::string_view label);
  Handle ring(std::span<const int> ranks, int steps, Bytes size, int chunks,
              std::span<const PlanTaskId> after);
};

}  // namespace hopsim::work
