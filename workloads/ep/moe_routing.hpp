// Random MoE routing (top-k experts, node-limited) turned into all-to-all byte matrices: the
// routing spec (routing_spec.hpp), experts' popularity (popularity.hpp) and placement
// (placement.hpp), and here the routing itself.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/problem.hpp"
#include "topology/cluster.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/ep/placement.hpp"
#include "workloads/ep/popularity.hpp"
#include "workloads/ep/routing_spec.hpp"

namespace hopsim::work {

/// What routing gave besides the matrices: per expert the selections it took, and the
/// selections dropped by the capacity limit.
struct RoutingLoad {
  std::vector<std::int64_t> expert_tokens;
  /// Per rank of the group, the selections each of its slots took (the placement's order).
  std::vector<std::vector<std::int64_t>> slot_tokens;
  std::int64_t dropped = 0;
};

/// Problems of `routing` over `ranks` (GPUs with `gpus_per_node` per node), as pointers under
/// `at` (the placement's under `placement_at`): experts must spread evenly over the ranks, or
/// the placement list every expert on ranks of the group; and top_k distinct experts must exist
/// on every set of max_nodes_per_token nodes a token may pick, counting only experts with a
/// non-zero weight (replayed counts of 0 are blamed on `counts_at`).
Problems check_routing(const MoeRouting& routing, std::span<const topo::GpuId> ranks,
                       int gpus_per_node, const std::string& at,
                       const std::string& placement_at = "/placement",
                       const std::string& counts_at = "/counts");

/// Routes every token of every rank to `top_k` distinct experts and returns the two-tier matrix
/// of `token_bytes` per token: a GPU receives one copy of a token per token (not per expert it
/// hosts), and a node receives one copy over InfiniBand per token however many of its GPUs
/// need it. Uniform without bias: the experts of at most `max_nodes_per_token` random nodes,
/// then top-k among them at random. Zipf, or any bias: experts drawn one after another by
/// weight (popularity x e^bias) among those still allowed (not chosen yet; once a token has
/// reached `max_nodes_per_token` nodes, on those nodes only), renormalised at each draw:
/// sampling without replacement, exactly (draws over all experts until one is allowed; after
/// 64 rejections, one draw over the allowed experts' weights). With `load`, also what each
/// expert took and what the capacity dropped.
TwoTierMatrix route_tokens(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster,
                           const MoeRouting& routing, Bytes token_bytes,
                           RoutingLoad* load = nullptr);
/// The same with the GPUs' nodes as GPU id / `gpus_per_node` (the cluster's node_of), for
/// callers without a built cluster (explain).
TwoTierMatrix route_tokens(std::span<const topo::GpuId> ranks, int gpus_per_node,
                           const MoeRouting& routing, Bytes token_bytes,
                           RoutingLoad* load = nullptr);

}  // namespace hopsim::work
