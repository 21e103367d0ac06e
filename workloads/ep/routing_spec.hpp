// How tokens choose experts: the one routing spec of collectives and MoE layers, as data.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace hopsim::work {

/// training routing's run length (tokens that route alike), fitted on one published
/// forced-balance/dropless pair (docs/expert-parallelism.md#training-routing).
inline constexpr double kTrainingRunTokens = 1800;

/// How popular each expert is: all alike; Zipf's law over a seeded ranking of the experts (the
/// r-th most popular is chosen in proportion to 1 / r^s); weights drawn from a symmetric
/// Dirichlet distribution (seeded; the smaller alpha, the more skewed); given counts (a
/// router's per-expert histogram), in proportion; or training: each batch's popularity as a
/// trained router gives it (training_routing.hpp).
enum class RoutingDistribution : std::uint8_t { Uniform, Zipf, Dirichlet, Counts, Training };

/// training: the balancer whose residual a batch holds (training_routing.hpp): an auxiliary
/// balance loss (what the run length was fitted under) or DeepSeek-V3's per-expert bias.
enum class ResidualBalancer : std::uint8_t { AuxLoss, Bias };

/// "uniform", "zipf", "dirichlet", "counts", "training".
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
  /// training: tokens of a sequence that route alike, in a run (lambda, training_routing.hpp);
  /// the default is fitted on a published forced-balance/dropless pair.
  double run_tokens = kTrainingRunTokens;
  /// training: the balancer that left the residual; the bias leaves kBiasResidualScale of the
  /// aux loss's deviation from even.
  ResidualBalancer residual_balancer = ResidualBalancer::AuxLoss;
  /// training: tokens per sequence (a transformer layer's seq_len); 0: tokens_per_gpu.
  std::int64_t sequence_tokens = 0;
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

  bool operator==(const MoeRouting&) const = default;
};

}  // namespace hopsim::work
