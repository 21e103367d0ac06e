// Token routing by a seeded generator whose output is the same on every platform.
#include "workloads/collectives/moe_routing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"

namespace hopsim::work {
namespace {

// mt19937_64's sequence is fixed by the standard; std distributions are not, so draw by modulo.
std::uint64_t draw(std::mt19937_64& rng, std::uint64_t n) { return rng() % n; }

// Picks `k` distinct values of [0, n) (partial Fisher-Yates over `pool`).
void pick(std::mt19937_64& rng, std::vector<int>& pool, std::size_t k) {
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(draw(rng, pool.size() - i));
    std::swap(pool[i], pool[j]);
  }
}

// Where experts live: rank g hosts experts [g * per_gpu, (g + 1) * per_gpu); nodes are numbered
// by slot in the order of their ids.
struct ExpertLayout {
  std::size_t per_gpu = 0;
  std::vector<std::size_t> slot_of_rank;           // per index in ranks
  std::vector<std::vector<int>> experts_of_slot;   // per node slot
};

ExpertLayout layout(std::span<const int> ranks, const topo::Cluster& cluster,
                    std::int64_t experts) {
  const std::size_t n = ranks.size();
  HOPSIM_ASSERT(n > 0 && experts > 0 && static_cast<std::size_t>(experts) % n == 0,
                "{} experts over {} ranks", experts, n);
  ExpertLayout l;
  l.per_gpu = static_cast<std::size_t>(experts) / n;
  std::map<int, std::size_t> slot_of_node;
  for (int rank : ranks) {
    slot_of_node.emplace(cluster.node_of(rank), 0);
  }
  std::size_t next = 0;
  for (auto& [node, slot] : slot_of_node) {
    slot = next++;
  }
  l.experts_of_slot.resize(slot_of_node.size());
  for (std::size_t g = 0; g < n; ++g) {
    const std::size_t slot = slot_of_node[cluster.node_of(ranks[g])];
    l.slot_of_rank.push_back(slot);
    for (std::size_t e = g * l.per_gpu; e < (g + 1) * l.per_gpu; ++e) {
      l.experts_of_slot[slot].push_back(static_cast<int>(e));
    }
  }
  return l;
}

// The fewest experts a token can choose from: those of the `limit` nodes with the fewest ranks.
std::size_t smallest_choice(std::span<const int> ranks, int gpus_per_node, std::int64_t experts,
                            std::int64_t max_nodes) {
  std::map<int, std::size_t> ranks_on_node;
  for (int r : ranks) {
    ++ranks_on_node[r / gpus_per_node];
  }
  std::vector<std::size_t> counts;
  counts.reserve(ranks_on_node.size());
  for (const auto& [node, count] : ranks_on_node) {
    counts.push_back(count);
  }
  std::sort(counts.begin(), counts.end());
  const std::size_t limit =
      max_nodes <= 0 ? counts.size()
                     : std::min(counts.size(), static_cast<std::size_t>(max_nodes));
  const std::size_t per_gpu = static_cast<std::size_t>(experts) / ranks.size();
  std::size_t choice = 0;
  for (std::size_t i = 0; i < limit; ++i) {
    choice += counts[i] * per_gpu;
  }
  return choice;
}

}  // namespace

Problems check_routing(const MoeRouting& r, std::span<const int> ranks, int gpus_per_node,
                       const std::string& at) {
  Problems out;
  if (ranks.empty() || r.experts < 1 || r.experts % static_cast<std::int64_t>(ranks.size()) != 0) {
    out.push_back({at + "/experts", fmt::format("{} experts do not spread evenly over {} ranks",
                                                r.experts, ranks.size())});
    return out;
  }
  if (r.top_k < 1 || r.top_k > r.experts) {
    out.push_back({at + "/top_k", fmt::format("must be in [1, {}] (the experts), got {}",
                                              r.experts, r.top_k)});
    return out;
  }
  const std::size_t choice = smallest_choice(ranks, gpus_per_node, r.experts,
                                             r.max_nodes_per_token);
  if (static_cast<std::size_t>(r.top_k) > choice) {
    out.push_back({at + "/top_k",
                   fmt::format("{} experts per token, but a token limited to {} node(s) may see "
                               "only {} experts",
                               r.top_k, r.max_nodes_per_token, choice)});
  }
  return out;
}

std::string_view distribution_name(RoutingDistribution d) {
  switch (d) {
    case RoutingDistribution::Uniform:
      return "uniform";
    case RoutingDistribution::Zipf:
      return "zipf";
    case RoutingDistribution::Dirichlet:
      return "dirichlet";
    case RoutingDistribution::Counts:
      return "counts";
  }
  return "?";
}

namespace {

// A uniform double in [0, 1) from 53 bits of the generator (the same on every platform).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Zipf popularity over a seeded ranking of the experts: the cumulative weights by expert id,
// and the experts from most to least popular.
struct Popularity {
  std::vector<double> cdf;
  std::vector<int> order;
};

// A standard normal from two uniforms (Box-Muller), the same on every platform.
double normal(std::mt19937_64& rng) {
  const double u1 = 1.0 - unit(rng);  // (0, 1]
  const double u2 = unit(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// A Gamma(alpha, 1) draw: Marsaglia and Tsang's method, with alpha < 1 boosted by U^(1/alpha).
double gamma_draw(std::mt19937_64& rng, double alpha) {
  if (alpha < 1) {
    const double u = 1.0 - unit(rng);
    return gamma_draw(rng, alpha + 1) * std::pow(u, 1.0 / alpha);
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0;
    double v = 0;
    do {
      x = normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = 1.0 - unit(rng);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) {
      return d * v;
    }
  }
}

// Weights by expert id: the distribution's (Zipf over a ranking drawn from `popularity_seed`,
// a Dirichlet draw from it, the counts, or all 1), mixed toward even by `uniform_share`, times
// e^bias; and the experts from heaviest to lightest.
Popularity weights(const MoeRouting& r) {
  const auto experts = static_cast<std::size_t>(r.experts);
  Popularity p;
  std::vector<double> weight(experts, 1.0);
  std::mt19937_64 rng(r.popularity_seed);
  switch (r.distribution) {
    case RoutingDistribution::Uniform:
      break;
    case RoutingDistribution::Zipf: {
      std::vector<int> ranking(experts);
      std::iota(ranking.begin(), ranking.end(), 0);
      pick(rng, ranking, experts);
      for (std::size_t k = 0; k < experts; ++k) {
        weight[static_cast<std::size_t>(ranking[k])] =
            std::pow(static_cast<double>(k + 1), -r.zipf_s);
      }
      break;
    }
    case RoutingDistribution::Dirichlet:
      for (double& w : weight) {
        w = gamma_draw(rng, r.dirichlet_alpha);
      }
      break;
    case RoutingDistribution::Counts:
      HOPSIM_ASSERT(r.counts.size() == experts, "{} counts for {} experts", r.counts.size(),
                    experts);
      weight = r.counts;
      break;
  }
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  HOPSIM_ASSERT(total > 0, "expert weights sum to {}", total);
  for (double& w : weight) {
    w = (1 - r.uniform_share) * w / total + r.uniform_share / static_cast<double>(experts);
  }
  for (std::size_t e = 0; e < r.bias.size() && e < experts; ++e) {
    weight[e] *= std::exp(r.bias[e]);
  }
  p.order.resize(experts);
  std::iota(p.order.begin(), p.order.end(), 0);
  std::stable_sort(p.order.begin(), p.order.end(),
                   [&](int a, int b) { return weight[static_cast<std::size_t>(a)] >
                                              weight[static_cast<std::size_t>(b)]; });
  p.cdf.resize(experts);
  std::partial_sum(weight.begin(), weight.end(), p.cdf.begin());
  return p;
}

int draw_expert(std::mt19937_64& rng, const Popularity& p) {
  const double u = unit(rng) * p.cdf.back();
  const auto it = std::upper_bound(p.cdf.begin(), p.cdf.end(), u);
  return static_cast<int>(std::min<std::ptrdiff_t>(it - p.cdf.begin(),
                                                   static_cast<std::ptrdiff_t>(p.cdf.size()) - 1));
}

}  // namespace

TwoTierMatrix route_tokens(std::span<const int> ranks, const topo::Cluster& cluster,
                           const MoeRouting& r, Bytes token_bytes, RoutingLoad* load) {
  const ExpertLayout l = layout(ranks, cluster, r.experts);
  const std::size_t n = ranks.size();
  const std::size_t nodes = l.experts_of_slot.size();
  const std::size_t node_limit =
      r.max_nodes_per_token <= 0 ? nodes
                                 : std::min(nodes, static_cast<std::size_t>(r.max_nodes_per_token));
  const auto top_k = static_cast<std::size_t>(r.top_k);
  TwoTierMatrix m;
  m.gpu = ByteMatrix{n, std::vector<std::int64_t>(n * n, 0)};
  m.selections = ByteMatrix{n, std::vector<std::int64_t>(n * n, 0)};
  m.nodes = nodes;
  m.to_node.assign(n * nodes, 0);
  std::vector<std::int64_t> taken(static_cast<std::size_t>(r.experts), 0);
  std::int64_t dropped = 0;
  // Capacity: a share of the group's selections, n x tokens x top_k / experts, times the factor.
  const double even = static_cast<double>(n) * static_cast<double>(r.tokens_per_gpu) *
                      static_cast<double>(r.top_k) / static_cast<double>(r.experts);
  const std::int64_t capacity =
      r.capacity_factor > 0 ? static_cast<std::int64_t>(std::ceil(r.capacity_factor * even))
                            : std::numeric_limits<std::int64_t>::max();
  std::mt19937_64 rng(r.seed);
  const bool weighted = r.distribution != RoutingDistribution::Uniform || !r.bias.empty();
  const Popularity popular = weighted ? weights(r) : Popularity{};
  std::vector<int> node_pool(nodes);
  std::vector<int> candidates;
  std::vector<std::size_t> reached;  // zipf: the nodes a token has reached
  // Stamps instead of cleared flags: a token costs O(top_k) here, not O(ranks).
  std::vector<std::uint64_t> gpu_hit(n, 0);
  std::vector<std::uint64_t> node_hit(nodes, 0);
  std::vector<std::uint64_t> expert_hit(static_cast<std::size_t>(r.experts), 0);
  std::uint64_t stamp = 0;
  const auto slot_of_expert = [&](int e) {
    return l.slot_of_rank[static_cast<std::size_t>(e) / l.per_gpu];
  };
  // Weighted: may the token take expert e (not yet chosen, on a node it reaches or may still)?
  const auto allowed = [&](int e) {
    if (expert_hit[static_cast<std::size_t>(e)] == stamp) {
      return false;
    }
    const std::size_t slot = slot_of_expert(e);
    return reached.size() < node_limit ||
           std::find(reached.begin(), reached.end(), slot) != reached.end();
  };
  for (std::size_t src = 0; src < n; ++src) {
    for (std::int64_t t = 0; t < r.tokens_per_gpu; ++t) {
      ++stamp;
      candidates.clear();
      if (weighted) {
        reached.clear();
        for (std::size_t k = 0; k < top_k; ++k) {
          int e = -1;
          for (int attempt = 0; attempt < 64 && e < 0; ++attempt) {
            const int c = draw_expert(rng, popular);
            e = allowed(c) ? c : -1;
          }
          for (std::size_t i = 0; e < 0 && i < popular.order.size(); ++i) {
            e = allowed(popular.order[i]) ? popular.order[i] : -1;
          }
          HOPSIM_ASSERT(e >= 0, "top-{} within {} nodes", top_k, node_limit);
          expert_hit[static_cast<std::size_t>(e)] = stamp;
          if (std::find(reached.begin(), reached.end(), slot_of_expert(e)) == reached.end()) {
            reached.push_back(slot_of_expert(e));
          }
          candidates.push_back(e);
        }
      } else {
        std::iota(node_pool.begin(), node_pool.end(), 0);
        pick(rng, node_pool, node_limit);
        for (std::size_t k = 0; k < node_limit; ++k) {
          const auto& e = l.experts_of_slot[static_cast<std::size_t>(node_pool[k])];
          candidates.insert(candidates.end(), e.begin(), e.end());
        }
        HOPSIM_ASSERT(candidates.size() >= top_k, "top-{} among {} experts", top_k,
                      candidates.size());
        pick(rng, candidates, top_k);
      }
      for (std::size_t k = 0; k < top_k; ++k) {
        const auto expert = static_cast<std::size_t>(candidates[k]);
        if (taken[expert] >= capacity) {
          ++dropped;
          continue;
        }
        ++taken[expert];
        const std::size_t dst = expert / l.per_gpu;
        m.selections.bytes[src * n + dst] += token_bytes.n;
        if (gpu_hit[dst] != stamp) {
          gpu_hit[dst] = stamp;
          m.gpu.bytes[src * n + dst] += token_bytes.n;
        }
        const std::size_t node = l.slot_of_rank[dst];
        if (node_hit[node] != stamp) {
          node_hit[node] = stamp;
          m.to_node[src * nodes + node] += token_bytes.n;
        }
      }
    }
  }
  if (load != nullptr) {
    load->expert_tokens = std::move(taken);
    load->dropped = dropped;
  }
  return m;
}

}  // namespace hopsim::work
