// Random MoE routing (top-k experts, node-limited) turned into all-to-all byte matrices.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"

#include "topology/cluster.hpp"
#include "workloads/collectives/collectives.hpp"

namespace hopsim::work {

/// How popular each expert is: all alike; Zipf's law over a seeded ranking of the experts (the
/// r-th most popular is chosen in proportion to 1 / r^s); weights drawn from a symmetric
/// Dirichlet distribution (seeded; the smaller alpha, the more skewed); or given counts (a
/// router's per-expert histogram), in proportion.
enum class RoutingDistribution : std::uint8_t { Uniform, Zipf, Dirichlet, Counts };

/// "uniform", "zipf", "dirichlet", "counts".
std::string_view distribution_name(RoutingDistribution d);

/// How tokens choose experts: the one routing spec of collectives and MoE layers.
struct MoeRouting {
  std::int64_t tokens_per_gpu = 4096;
  std::int64_t experts = 256;  ///< routed experts, spread evenly over the ranks
  std::int64_t top_k = 8;
  std::int64_t max_nodes_per_token = 4;  ///< 0: no node limit
  std::uint64_t seed = 1;
  RoutingDistribution distribution = RoutingDistribution::Uniform;
  double zipf_s = 1.0;  ///< zipf: the exponent s (0: uniform popularity)
  double dirichlet_alpha = 1.0;  ///< dirichlet: the concentration of every expert's weight
  std::vector<double> counts{};  ///< counts: per expert, selections it took in some log
  /// zipf and dirichlet: seeds the experts' popularity; one router, so the same for every EP
  /// group and micro-batch (their tokens differ by `seed`).
  std::uint64_t popularity_seed = 1;
  /// A balancer's pull toward even: this share of each expert's weight is the even 1 /
  /// experts (0: the popularity as it is; 1: uniform). The auxiliary-loss balancer's model.
  double uniform_share = 0;
  /// 0: no limit; else an expert takes at most ceil(factor x its even share of the group's
  /// selections), in the order tokens come (rank by rank); the selections over it are dropped.
  double capacity_factor = 0;
  /// Per expert, added to the log of its weight (a balancer's routing bias); empty: none.
  std::vector<double> bias{};
  /// Per rank of the group, the experts of its slots; an expert on several ranks has redundant
  /// copies, and a token sends to the copy that took the fewest selections so far (one on a
  /// node it already reaches first). Empty: even_placement.
  std::vector<std::vector<int>> placement{};
};

/// The weight by which route_tokens draws each expert when the routing is weighted (Zipf,
/// Dirichlet, counts or a bias): the popularity as a share of 1, mixed toward even by
/// `uniform_share`, times e^bias.
std::vector<double> expert_weights(const MoeRouting& routing);

/// Rank g of `ranks` hosts experts [g x experts / ranks, (g + 1) x experts / ranks).
std::vector<std::vector<int>> even_placement(std::int64_t experts, std::size_t ranks);

/// The even placement plus `extra_per_rank` slots on every rank for redundant copies, as
/// DeepSeek-V3's inference does with hot experts: each extra copy goes to the expert whose
/// copies would each carry the most of the expected selections (`routing`'s popularity), and
/// copies, heaviest first, to the least loaded rank with a free slot that lacks the expert.
std::vector<std::vector<int>> redundant_placement(const MoeRouting& routing, std::size_t ranks,
                                                  std::int64_t extra_per_rank);

/// Problems (under `at`) of `extra_per_rank` redundant slots per rank: a rank hosts each expert
/// at most once, so beside its even share it has room for copies of the other experts only.
Problems check_redundancy(std::int64_t experts, std::size_t ranks, std::int64_t extra_per_rank,
                          const std::string& at = "/redundant_experts");

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
Problems check_routing(const MoeRouting& routing, std::span<const int> ranks, int gpus_per_node,
                       const std::string& at, const std::string& placement_at = "/placement",
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
TwoTierMatrix route_tokens(std::span<const int> ranks, const topo::Cluster& cluster,
                           const MoeRouting& routing, Bytes token_bytes,
                           RoutingLoad* load = nullptr);

}  // namespace hopsim::work
