// DeepSeek-V3's auxiliary-loss-free balancing: a per-expert routing bias, nudged after every
// training step against the expert's load, simulated over steps.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "topology/cluster.hpp"
#include "workloads/ep/moe_routing.hpp"

namespace hopsim::work {

struct BiasBalance {
  std::vector<double> bias;            ///< per expert, after the last step
  std::vector<double> max_over_mean;   ///< per step: max / mean of the GPUs' expert rows
};

/// Tokens a balancer step routes over the group: 16,384 for up to 200 steps; beyond, the 200
/// steps' budget shared out, but never fewer than 32 selections per expert (1,024 tokens for
/// 256 experts and top-8). The balancer then costs at most what 200 full steps do, and beyond
/// O(steps x experts) (it re-routed 16,384 tokens a step: 136-182 s for 10,000 steps of a
/// 16-GPU layer, now 5 s). Smaller samples give noisier loads; the bias's sign updates average
/// them over the many steps.
inline constexpr std::int64_t kBalancerStepTokens = 16384;
inline constexpr std::int64_t kBalancerTokenBudget = 200 * kBalancerStepTokens;
inline constexpr std::int64_t kBalancerSelectionsPerExpert = 32;

/// The tokens each of `steps` balancer steps routes over the group (before splitting by GPU).
std::int64_t sample_tokens(std::int64_t steps, std::int64_t experts, std::int64_t top_k);

/// `steps` training steps of `routing` over `ranks`: each step routes a sample of tokens
/// (sample_tokens(steps, ...) over the group, new ones each step) with the current bias, then adds
/// `gamma` to the bias of every expert below the mean load and subtracts it from every expert
/// above. The bias is in log-weight units: gamma = 0.05 scales an expert's weight by e^0.05 per
/// step. DeepSeek adds its bias (0.001 per step) to sigmoid affinities, which this model does
/// not have.
BiasBalance balance_bias(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster,
                         MoeRouting routing, std::int64_t steps, double gamma);

}  // namespace hopsim::work
