// Random MoE routing (top-k experts, node-limited) turned into all-to-all byte matrices.
#pragma once

#include <cstdint>
#include <span>

#include "topology/cluster.hpp"
#include "workloads/collectives/collectives.hpp"

namespace hopsim::work {

struct MoeRouting {
  std::int64_t tokens_per_gpu = 4096;
  int experts = 256;  ///< routed experts, spread evenly over the ranks
  int top_k = 8;
  int max_nodes_per_token = 4;  ///< 0: no node limit
  std::int64_t token_bytes = 7168;  ///< bytes of one token's hidden state on the wire
  std::uint64_t seed = 1;
};

/// Routes every token of every rank to `top_k` distinct experts (uniformly at random among
/// the experts of at most `max_nodes_per_token` random nodes) and returns the two-tier matrix:
/// a GPU receives one copy of a token per token (not per expert it hosts), and a node receives
/// one copy over InfiniBand per token however many of its GPUs need it.
TwoTierMatrix route_tokens(std::span<const int> ranks, const topo::Cluster& cluster,
                           const MoeRouting& routing);

}  // namespace hopsim::work
