#include "workloads/ep/balancer.hpp"

#include <algorithm>
#include <numeric>

#include "workloads/ep/ep_details.hpp"

namespace hopsim::work {

std::int64_t sample_tokens(std::int64_t steps, std::int64_t experts, std::int64_t top_k) {
  const std::int64_t fewest =
      std::min(kBalancerStepTokens,
               kBalancerSelectionsPerExpert * experts / std::max<std::int64_t>(top_k, 1));
  return std::clamp<std::int64_t>(kBalancerTokenBudget / std::max<std::int64_t>(steps, 1),
                                  std::max<std::int64_t>(fewest, 1), kBalancerStepTokens);
}

BiasBalance balance_bias(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster,
                         MoeRouting routing, std::int64_t steps, double gamma) {
  const auto n = static_cast<std::int64_t>(ranks.size());
  const auto experts = static_cast<std::size_t>(routing.experts);
  routing.tokens_per_gpu =
      std::clamp<std::int64_t>(sample_tokens(steps, routing.experts, routing.top_k) / n, 1,
                               routing.tokens_per_gpu);
  routing.capacity_factor = 0;  // the balancer sees the router's choices, before any drop
  routing.bias.assign(experts, 0.0);
  const std::uint64_t base = routing.seed;
  BiasBalance out;
  for (std::int64_t s = 0; s < steps; ++s) {
    routing.seed = base + 0xD1B54A32D192ED03ULL * static_cast<std::uint64_t>(s + 1);
    RoutingLoad load;
    route_tokens(ranks, cluster, routing, Bytes{1}, &load);
    std::vector<std::int64_t> rows;
    for (const std::vector<std::int64_t>& slots : load.slot_tokens) {
      rows.push_back(std::accumulate(slots.begin(), slots.end(), std::int64_t{0}));
    }
    out.max_over_mean.push_back(max_over_mean(rows));
    const double mean =
        static_cast<double>(std::accumulate(load.expert_tokens.begin(), load.expert_tokens.end(),
                                            std::int64_t{0})) /
        static_cast<double>(experts);
    for (std::size_t e = 0; e < experts; ++e) {
      const auto taken = static_cast<double>(load.expert_tokens[e]);
      routing.bias[e] += taken > mean ? -gamma : taken < mean ? gamma : 0.0;
    }
  }
  out.bias = std::move(routing.bias);
  return out;
}

}  // namespace hopsim::work
