// Token routing by a seeded generator whose output is the same on every platform.
#include "workloads/ep/moe_routing.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/ep/modulo_draws.hpp"
#include "workloads/ep/routing_rng.hpp"

namespace hopsim::work {
namespace {

// Picks the first `k` of `pool` at random (partial Fisher-Yates). RoutingRng's sequence is
// fixed by its definition; std distributions are not, so positions are drawn by modulo.
void pick(ModuloDraws& draws, std::span<int> pool, std::size_t k) {
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(draws(pool.size() - i));
    std::swap(pool[i], pool[j]);
  }
}

// Where experts live: per rank (index in the group) its slots' experts, per expert its copies
// (rank index, slot), per node slot the distinct experts on it; nodes are numbered by slot in
// the order of their ids.
struct ExpertLayout {
  std::vector<std::vector<int>> slots;                    // per rank
  std::vector<std::vector<std::pair<int, int>>> copies;   // per expert: (rank, slot)
  std::vector<std::size_t> node_of_rank;                  // node slot per rank
  std::vector<std::vector<int>> experts_of_node;          // distinct, per node slot
};

template <class NodeOf>
ExpertLayout layout_of(std::size_t n, NodeOf node_of, const MoeRouting& r) {
  ExpertLayout l;
  l.slots = r.placement.empty() ? even_placement(r.experts, n) : r.placement;
  std::map<int, std::size_t> slot_of_node;
  for (std::size_t g = 0; g < n; ++g) {
    slot_of_node.emplace(node_of(g), 0);
  }
  std::size_t next = 0;
  for (auto& [node, slot] : slot_of_node) {
    slot = next++;
  }
  l.copies.resize(static_cast<std::size_t>(r.experts));
  l.experts_of_node.resize(slot_of_node.size());
  std::vector<std::vector<char>> on_node(slot_of_node.size(),
                                         std::vector<char>(static_cast<std::size_t>(r.experts), 0));
  for (std::size_t g = 0; g < n; ++g) {
    const std::size_t node = slot_of_node[node_of(g)];
    l.node_of_rank.push_back(node);
    for (std::size_t k = 0; k < l.slots[g].size(); ++k) {
      const int e = l.slots[g][k];
      l.copies[static_cast<std::size_t>(e)].emplace_back(static_cast<int>(g), static_cast<int>(k));
      if (on_node[node][static_cast<std::size_t>(e)] == 0) {
        on_node[node][static_cast<std::size_t>(e)] = 1;
        l.experts_of_node[node].push_back(e);
      }
    }
  }
  return l;
}

ExpertLayout layout(std::span<const int> ranks, const topo::Cluster& cluster,
                    const MoeRouting& r) {
  return layout_of(
      ranks.size(), [&](std::size_t g) { return cluster.node_of(ranks[g]); }, r);
}

// Subsets of nodes a feasibility check enumerates at most.
constexpr double kMaxNodeSubsets = 2e5;

// The fewest distinct experts a token limited to `limit` nodes can choose from, or a lower
// bound of it, counting only the experts it may ever choose (`live`): a token reaches only
// nodes with such an expert. With the even placement, the experts of the nodes with the fewest;
// else the smallest union over every set of that many nodes or, when there are too many sets
// to try, the limit-th smallest node's count (any union of that many nodes has at least as
// many).
std::int64_t fewest_choice(const ExpertLayout& l, std::size_t limit, bool even,
                           const std::vector<char>& live) {
  std::vector<std::vector<int>> of_node;  // the live experts of each node that has one
  for (const auto& on : l.experts_of_node) {
    std::vector<int> here;
    std::copy_if(on.begin(), on.end(), std::back_inserter(here),
                 [&](int e) { return live[static_cast<std::size_t>(e)] != 0; });
    if (!here.empty()) {
      of_node.push_back(std::move(here));
    }
  }
  const std::size_t nodes = of_node.size();
  if (nodes == 0) {
    return 0;
  }
  limit = limit == 0 ? nodes : std::min(limit, nodes);
  std::vector<std::int64_t> counts;
  for (const auto& e : of_node) {
    counts.push_back(static_cast<std::int64_t>(e.size()));
  }
  std::sort(counts.begin(), counts.end());
  if (even) {  // nodes share no expert
    return std::accumulate(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(limit),
                           std::int64_t{0});
  }
  double subsets = 1;
  for (std::size_t i = 0; i < limit; ++i) {
    subsets = subsets * static_cast<double>(nodes - i) / static_cast<double>(i + 1);
  }
  if (subsets > kMaxNodeSubsets) {
    return counts[limit - 1];
  }
  const std::size_t experts = l.copies.size();
  const std::size_t words = (experts + 63) / 64;
  std::vector<std::vector<std::uint64_t>> bits(nodes, std::vector<std::uint64_t>(words, 0));
  for (std::size_t v = 0; v < nodes; ++v) {
    for (int e : of_node[v]) {
      bits[v][static_cast<std::size_t>(e) / 64] |= std::uint64_t{1} << (e % 64);
    }
  }
  std::int64_t fewest = std::numeric_limits<std::int64_t>::max();
  std::vector<std::size_t> pick_of(limit);
  std::iota(pick_of.begin(), pick_of.end(), 0);
  std::vector<std::uint64_t> u(words);
  for (;;) {
    std::fill(u.begin(), u.end(), 0);
    for (std::size_t v : pick_of) {
      for (std::size_t w = 0; w < words; ++w) {
        u[w] |= bits[v][w];
      }
    }
    std::int64_t count = 0;
    for (std::uint64_t w : u) {
      count += std::popcount(w);
    }
    fewest = std::min(fewest, count);
    // The next combination of `limit` of `nodes`, in lexicographic order.
    std::size_t i = limit;
    while (i > 0 && pick_of[i - 1] == nodes - limit + i - 1) {
      --i;
    }
    if (i == 0) {
      break;
    }
    ++pick_of[i - 1];
    for (std::size_t j = i; j < limit; ++j) {
      pick_of[j] = pick_of[j - 1] + 1;
    }
  }
  return fewest;
}

// Problems of an explicit placement over `n` ranks: one list per rank, each expert somewhere,
// ids in range, no expert twice on one rank.
Problems check_placement(const MoeRouting& r, std::size_t n, const std::string& at) {
  Problems out;
  if (r.placement.size() != n) {
    out.push_back({at, fmt::format("{} lists of experts for an EP group of {} ranks",
                                   r.placement.size(), n)});
    return out;
  }
  std::vector<int> seen(static_cast<std::size_t>(r.experts), 0);
  for (std::size_t g = 0; g < n; ++g) {
    std::vector<int> here;
    for (int e : r.placement[g]) {
      if (e < 0 || e >= r.experts) {
        out.push_back({fmt::format("{}/{}", at, g),
                       fmt::format("expert {} is not one of the {} routed experts", e, r.experts)});
        return out;
      }
      if (std::find(here.begin(), here.end(), e) != here.end()) {
        out.push_back({fmt::format("{}/{}", at, g),
                       fmt::format("expert {} twice on one rank", e)});
        return out;
      }
      here.push_back(e);
      ++seen[static_cast<std::size_t>(e)];
    }
    if (here.empty()) {
      out.push_back({fmt::format("{}/{}", at, g), "a rank of the EP group hosts no expert"});
      return out;
    }
  }
  const auto missing = std::find(seen.begin(), seen.end(), 0);
  if (missing != seen.end()) {
    out.push_back({at, fmt::format("expert {} is on no rank", missing - seen.begin())});
  }
  return out;
}

}  // namespace

Problems check_redundancy(std::int64_t experts, std::size_t ranks, std::int64_t extra_per_rank,
                          const std::string& at) {
  Problems out;
  const std::int64_t most = experts - experts / static_cast<std::int64_t>(ranks);
  if (extra_per_rank > most) {
    out.push_back({at, fmt::format("{} extra slots per GPU, but a GPU that hosts {} of the {} "
                                   "experts has room for copies of at most {} others",
                                   extra_per_rank, experts / static_cast<std::int64_t>(ranks),
                                   experts, most)});
  }
  return out;
}

std::vector<std::vector<int>> even_placement(std::int64_t experts, std::size_t ranks) {
  HOPSIM_ASSERT(ranks > 0 && experts > 0 && static_cast<std::size_t>(experts) % ranks == 0,
                "{} experts over {} ranks", experts, ranks);
  const std::size_t per = static_cast<std::size_t>(experts) / ranks;
  std::vector<std::vector<int>> out(ranks);
  for (std::size_t g = 0; g < ranks; ++g) {
    for (std::size_t e = g * per; e < (g + 1) * per; ++e) {
      out[g].push_back(static_cast<int>(e));
    }
  }
  return out;
}

Problems check_routing(const MoeRouting& r, std::span<const int> ranks, int gpus_per_node,
                       const std::string& at, const std::string& placement_at,
                       const std::string& counts_at) {
  Problems out;
  if (!r.placement.empty()) {
    out = check_placement(r, ranks.size(), placement_at);
    if (!out.empty()) {
      return out;
    }
  } else if (ranks.empty() || r.experts < 1 ||
             r.experts % static_cast<std::int64_t>(ranks.size()) != 0) {
    out.push_back({at + "/experts", fmt::format("{} experts do not spread evenly over {} ranks",
                                                r.experts, ranks.size())});
    return out;
  }
  if (r.top_k < 1 || r.top_k > r.experts) {
    out.push_back({at + "/top_k", fmt::format("must be in [1, {}] (the experts), got {}",
                                              r.experts, r.top_k)});
    return out;
  }
  const ExpertLayout l = layout_of(
      ranks.size(), [&](std::size_t g) { return ranks[g] / gpus_per_node; }, r);
  const auto limit = static_cast<std::size_t>(std::max<std::int64_t>(0, r.max_nodes_per_token));
  // Experts a token may ever choose: all, unless replayed counts leave some at 0 (and no
  // balancer's even share lifts them).
  std::vector<char> live(static_cast<std::size_t>(r.experts), 1);
  std::int64_t dead = 0;
  if (r.distribution == RoutingDistribution::Counts && r.uniform_share <= 0 &&
      r.counts.size() == live.size()) {
    for (std::size_t e = 0; e < live.size(); ++e) {
      live[e] = r.counts[e] > 0 ? 1 : 0;
      dead += live[e] == 0 ? 1 : 0;
    }
  }
  const std::int64_t choice = fewest_choice(l, limit, r.placement.empty(), live);
  if (r.top_k > choice && dead > 0) {
    out.push_back({counts_at,
                   fmt::format("{} of the {} counts are non-zero, and a token{} may choose "
                               "among only {} of those experts: fewer than top-{}",
                               r.experts - dead, r.experts,
                               r.max_nodes_per_token > 0
                                   ? fmt::format(" limited to {} node(s)", r.max_nodes_per_token)
                                   : std::string(),
                               choice, r.top_k)});
  } else if (r.top_k > choice) {
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
double unit(RoutingRng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// The experts' popularity: the cumulative weights by expert id (for draws over all experts),
// and each weight's natural log (-inf: never chosen; exact where a weight underflows as a
// double).
struct Popularity {
  std::vector<double> cdf;
  std::vector<double> log_weight;
};

// A standard normal from two uniforms (Box-Muller), the same on every platform.
double normal(RoutingRng& rng) {
  const double u1 = 1.0 - unit(rng);  // (0, 1]
  const double u2 = unit(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// The log of a Gamma(alpha, 1) draw: Marsaglia and Tsang's method, with alpha < 1 boosted by
// U^(1/alpha) (in logs: for alpha near 1e-3 that factor is below the smallest double).
double log_gamma_draw(RoutingRng& rng, double alpha) {
  if (alpha < 1) {
    const double u = 1.0 - unit(rng);
    return log_gamma_draw(rng, alpha + 1) + std::log(u) / alpha;
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
      return std::log(d * v);
    }
  }
}

// Weights by expert id: the distribution's (Zipf over a ranking drawn from `popularity_seed`,
// a Dirichlet draw from it, the counts, or all 1), mixed toward even by `uniform_share`, times
// e^bias, and their logs.
Popularity weights(const MoeRouting& r) {
  const auto experts = static_cast<std::size_t>(r.experts);
  Popularity p;
  std::vector<double> weight(experts, 1.0);
  std::vector<double> log_raw(experts, 0.0);
  RoutingRng rng(r.popularity_seed);
  switch (r.distribution) {
    case RoutingDistribution::Uniform:
      break;
    case RoutingDistribution::Zipf: {
      std::vector<int> ranking(experts);
      std::iota(ranking.begin(), ranking.end(), 0);
      ModuloDraws draws(rng, experts);
      pick(draws, std::span<int>(ranking), experts);
      for (std::size_t k = 0; k < experts; ++k) {
        const auto e = static_cast<std::size_t>(ranking[k]);
        weight[e] = std::pow(static_cast<double>(k + 1), -r.zipf_s);
        log_raw[e] = -r.zipf_s * std::log(static_cast<double>(k + 1));
      }
      break;
    }
    case RoutingDistribution::Dirichlet: {
      // Drawn as logs and scaled by the largest, so that the heaviest weighs 1 (a sum of
      // underflowed draws cannot be 0) and the lightest keep their order in the logs.
      for (double& l : log_raw) {
        l = log_gamma_draw(rng, r.dirichlet_alpha);
      }
      const double top = *std::max_element(log_raw.begin(), log_raw.end());
      for (std::size_t e = 0; e < experts; ++e) {
        log_raw[e] -= top;
        weight[e] = std::exp(log_raw[e]);
      }
      break;
    }
    case RoutingDistribution::Counts:
      HOPSIM_ASSERT(r.counts.size() == experts, "{} counts for {} experts", r.counts.size(),
                    experts);
      weight = r.counts;
      for (std::size_t e = 0; e < experts; ++e) {
        log_raw[e] = std::log(weight[e]);  // -inf for a count of 0
      }
      break;
  }
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  HOPSIM_ASSERT(total > 0, "expert weights sum to {}", total);
  const double even = r.uniform_share / static_cast<double>(experts);
  p.log_weight.resize(experts);
  for (std::size_t e = 0; e < experts; ++e) {
    weight[e] = (1 - r.uniform_share) * weight[e] / total + even;
    p.log_weight[e] = r.uniform_share > 0 ? std::log(weight[e])
                                          : log_raw[e] - std::log(total);
  }
  for (std::size_t e = 0; e < r.bias.size() && e < experts; ++e) {
    weight[e] *= std::exp(r.bias[e]);
    p.log_weight[e] += r.bias[e];
  }
  p.cdf.resize(experts);
  std::partial_sum(weight.begin(), weight.end(), p.cdf.begin());
  return p;
}

int draw_expert(RoutingRng& rng, const Popularity& p) {
  const double u = unit(rng) * p.cdf.back();
  const auto it = std::upper_bound(p.cdf.begin(), p.cdf.end(), u);
  return static_cast<int>(std::min<std::ptrdiff_t>(it - p.cdf.begin(),
                                                   static_cast<std::ptrdiff_t>(p.cdf.size()) - 1));
}

// An expert drawn by weight among those `allowed` takes: exact, over the weights' logs (those
// too light for the cdf too), or -1 when no allowed expert can ever be chosen.
template <class Allowed>
int draw_allowed(RoutingRng& rng, const Popularity& p, Allowed allowed) {
  std::vector<int> open;  // allowed experts with a weight
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t e = 0; e < p.log_weight.size(); ++e) {
    if (std::isfinite(p.log_weight[e]) && allowed(static_cast<int>(e))) {
      open.push_back(static_cast<int>(e));
      top = std::max(top, p.log_weight[e]);
    }
  }
  if (open.empty()) {
    return -1;
  }
  const auto weight = [&](int e) {
    return std::exp(p.log_weight[static_cast<std::size_t>(e)] - top);
  };
  double total = 0;
  for (int e : open) {
    total += weight(e);
  }
  double u = unit(rng) * total;
  for (int e : open) {
    u -= weight(e);
    if (u < 0) {
      return e;
    }
  }
  return open.back();  // u was within rounding of the total
}

}  // namespace

std::vector<double> expert_weights(const MoeRouting& r) {
  const Popularity p = weights(r);
  std::vector<double> out;
  out.reserve(p.log_weight.size());
  for (double l : p.log_weight) {
    out.push_back(std::exp(l));
  }
  return out;
}

std::vector<std::vector<int>> redundant_placement(const MoeRouting& r, std::size_t ranks,
                                                  std::int64_t extra_per_rank) {
  std::vector<std::vector<int>> slots = even_placement(r.experts, ranks);
  if (extra_per_rank <= 0) {
    return slots;
  }
  // Expected share of the selections per expert: the popularity's weights (bias included).
  const auto experts = static_cast<std::size_t>(r.experts);
  std::vector<double> weight(experts, 1.0 / static_cast<double>(experts));
  if (r.distribution != RoutingDistribution::Uniform || !r.bias.empty() || r.uniform_share > 0) {
    const Popularity p = weights(r);
    for (std::size_t e = 0; e < experts; ++e) {
      weight[e] = (p.cdf[e] - (e == 0 ? 0.0 : p.cdf[e - 1])) / p.cdf.back();
    }
  }
  // Copies: each extra one to the expert whose copies carry the most each (ties: lower id),
  // at most one copy per rank. Each rank holds at most every expert once, so there is room
  // (check_redundancy).
  const std::size_t extra = ranks * static_cast<std::size_t>(extra_per_rank);
  HOPSIM_ASSERT(check_redundancy(r.experts, ranks, extra_per_rank).empty(),
                "{} extra slots per rank for {} experts over {} ranks", extra_per_rank,
                r.experts, ranks);
  std::vector<int> copies(experts, 1);
  std::vector<int> replicas;  // experts of the extra slots
  const auto per_copy = [&](std::size_t e) { return weight[e] / copies[e]; };
  for (std::size_t i = 0; i < extra; ++i) {
    std::size_t best = experts;
    for (std::size_t e = 0; e < experts; ++e) {
      if (static_cast<std::size_t>(copies[e]) < ranks &&
          (best == experts || per_copy(e) > per_copy(best))) {
        best = e;
      }
    }
    ++copies[best];
    replicas.push_back(static_cast<int>(best));
  }
  // Each replica, heaviest per copy first, to the least loaded rank with a free extra slot that
  // does not host the expert yet (ties: lower rank).
  std::vector<double> rank_load(ranks, 0.0);
  for (std::size_t g = 0; g < ranks; ++g) {
    for (int e : slots[g]) {
      rank_load[g] += weight[static_cast<std::size_t>(e)] / copies[static_cast<std::size_t>(e)];
    }
  }
  std::stable_sort(replicas.begin(), replicas.end(), [&](int a, int b) {
    return weight[static_cast<std::size_t>(a)] / copies[static_cast<std::size_t>(a)] >
           weight[static_cast<std::size_t>(b)] / copies[static_cast<std::size_t>(b)];
  });
  const std::size_t full = slots.front().size() + static_cast<std::size_t>(extra_per_rank);
  const auto hosts = [&](std::size_t g, int e) {
    return std::find(slots[g].begin(), slots[g].end(), e) != slots[g].end();
  };
  for (int e : replicas) {
    std::size_t best = ranks;
    std::size_t open = ranks;  // the least loaded rank with a free slot, hosting e or not
    for (std::size_t g = 0; g < ranks; ++g) {
      if (slots[g].size() >= full) {
        continue;
      }
      if (open == ranks || rank_load[g] < rank_load[open]) {
        open = g;
      }
      if (!hosts(g, e) && (best == ranks || rank_load[g] < rank_load[best])) {
        best = g;
      }
    }
    if (best == ranks) {
      // Every rank with a free slot hosts e already: that slot takes the expert it lacks whose
      // copies carry the most each (a rank with a free slot lacks some: it holds < experts).
      best = open;
      --copies[static_cast<std::size_t>(e)];
      std::size_t other = experts;
      for (std::size_t f = 0; f < experts; ++f) {
        if (!hosts(best, static_cast<int>(f)) &&
            (other == experts || per_copy(f) > per_copy(other))) {
          other = f;
        }
      }
      e = static_cast<int>(other);
      ++copies[other];
    }
    slots[best].push_back(e);
    rank_load[best] +=
        weight[static_cast<std::size_t>(e)] / copies[static_cast<std::size_t>(e)];
  }
  return slots;
}

TwoTierMatrix route_tokens(std::span<const int> ranks, const topo::Cluster& cluster,
                           const MoeRouting& r, Bytes token_bytes, RoutingLoad* load) {
  const ExpertLayout l = layout(ranks, cluster, r);
  const std::size_t n = ranks.size();
  const std::size_t nodes = l.experts_of_node.size();
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
  std::vector<std::vector<std::int64_t>> slot_tokens(n);
  for (std::size_t g = 0; g < n; ++g) {
    slot_tokens[g].assign(l.slots[g].size(), 0);
  }
  std::int64_t dropped = 0;
  // Capacity: a share of the group's selections, n x tokens x top_k / experts, times the factor.
  const double even = static_cast<double>(n) * static_cast<double>(r.tokens_per_gpu) *
                      static_cast<double>(r.top_k) / static_cast<double>(r.experts);
  const std::int64_t capacity =
      r.capacity_factor > 0 ? static_cast<std::int64_t>(std::ceil(r.capacity_factor * even))
                            : std::numeric_limits<std::int64_t>::max();
  RoutingRng rng(r.seed);
  const bool weighted = r.distribution != RoutingDistribution::Uniform || !r.bias.empty();
  const Popularity popular = weighted ? weights(r) : Popularity{};
  std::vector<int> node_pool(nodes);
  std::vector<int> candidates;
  std::vector<std::pair<int, int>> chosen;  // per selection: the copy (rank, slot)
  // Stamps instead of cleared flags: a token costs O(top_k) here, not O(ranks).
  std::vector<std::uint64_t> gpu_hit(n, 0);
  std::vector<std::uint64_t> node_hit(nodes, 0);     // the token may reach the node
  std::vector<std::uint64_t> node_landed(nodes, 0);  // a selection of the token landed there
  std::vector<std::uint64_t> expert_hit(static_cast<std::size_t>(r.experts), 0);
  std::uint64_t stamp = 0;
  std::size_t reached = 0;  // nodes the token reaches
  // May the token take expert e (not yet chosen, with a copy on a node it reaches or may)?
  const auto allowed = [&](int e) {
    if (expert_hit[static_cast<std::size_t>(e)] == stamp) {
      return false;
    }
    if (reached < node_limit) {
      return true;
    }
    for (const auto& [g, k] : l.copies[static_cast<std::size_t>(e)]) {
      if (node_hit[l.node_of_rank[static_cast<std::size_t>(g)]] == stamp) {
        return true;
      }
    }
    return false;
  };
  // The copy of e the token sends to: one on a node it reaches, else any (a node it may still
  // reach); among those the one that took the fewest selections so far (ties: the first).
  const auto copy_of = [&](int e) {
    const auto& copies = l.copies[static_cast<std::size_t>(e)];
    if (copies.size() == 1) {
      return copies.front();
    }
    std::pair<int, int> best{-1, -1};
    bool best_reached = false;
    for (const auto& c : copies) {
      const bool on = node_hit[l.node_of_rank[static_cast<std::size_t>(c.first)]] == stamp;
      const std::int64_t tokens =
          slot_tokens[static_cast<std::size_t>(c.first)][static_cast<std::size_t>(c.second)];
      const bool better =
          best.first < 0 || (on && !best_reached) ||
          (on == best_reached &&
           tokens < slot_tokens[static_cast<std::size_t>(best.first)]
                               [static_cast<std::size_t>(best.second)]);
      if (better) {
        best = c;
        best_reached = on;
      }
    }
    return best;
  };
  const auto reach = [&](std::pair<int, int> c) {
    const std::size_t node = l.node_of_rank[static_cast<std::size_t>(c.first)];
    if (node_hit[node] != stamp) {
      node_hit[node] = stamp;
      ++reached;
    }
  };
  // Uniform routing when no expert is on two nodes: the candidates are the chosen nodes'
  // experts one after another, copied block by block, with no per-expert check for one seen
  // on an earlier node (the same list, so the same picks, several times faster).
  std::size_t listed = 0;
  for (const auto& e : l.experts_of_node) {
    listed += e.size();
  }
  const bool disjoint =
      listed == static_cast<std::size_t>(std::count_if(
                    l.copies.begin(), l.copies.end(), [](const auto& c) { return !c.empty(); }));
  ModuloDraws draws(rng, std::max<std::uint64_t>(nodes, static_cast<std::uint64_t>(r.experts)));
  std::vector<int> listing(disjoint ? listed : 0);  // the chosen nodes' experts, in order
  for (std::size_t src = 0; src < n; ++src) {
    for (std::int64_t t = 0; t < r.tokens_per_gpu; ++t) {
      ++stamp;
      reached = 0;
      candidates.clear();
      chosen.clear();
      if (weighted) {
        for (std::size_t k = 0; k < top_k; ++k) {
          int e = -1;
          for (int attempt = 0; attempt < 64 && e < 0; ++attempt) {
            const int c = draw_expert(rng, popular);
            e = allowed(c) ? c : -1;
          }
          if (e < 0) {  // the allowed experts are rare: one exact draw among them
            e = draw_allowed(rng, popular, allowed);
          }
          HOPSIM_ASSERT(e >= 0, "top-{} within {} nodes", top_k, node_limit);
          expert_hit[static_cast<std::size_t>(e)] = stamp;
          const std::pair<int, int> c = copy_of(e);
          reach(c);
          candidates.push_back(e);
          chosen.push_back(c);
        }
      } else {
        std::iota(node_pool.begin(), node_pool.end(), 0);
        pick(draws, std::span<int>(node_pool), node_limit);
        if (disjoint) {  // the chosen nodes' experts, block by block
          std::size_t size = 0;
          for (std::size_t k = 0; k < node_limit; ++k) {
            const auto node = static_cast<std::size_t>(node_pool[k]);
            node_hit[node] = stamp;
            const std::vector<int>& on = l.experts_of_node[node];
            std::copy(on.begin(), on.end(), listing.begin() + static_cast<std::ptrdiff_t>(size));
            size += on.size();
          }
          HOPSIM_ASSERT(size >= top_k, "top-{} among {} experts", top_k, size);
          pick(draws, std::span<int>(listing.data(), size), top_k);
          candidates.assign(listing.begin(), listing.begin() + static_cast<std::ptrdiff_t>(top_k));
        } else {
          for (std::size_t k = 0; k < node_limit; ++k) {
            const auto node = static_cast<std::size_t>(node_pool[k]);
            node_hit[node] = stamp;
            for (int e : l.experts_of_node[node]) {
              if (expert_hit[static_cast<std::size_t>(e)] != stamp) {  // on two chosen nodes
                expert_hit[static_cast<std::size_t>(e)] = stamp;
                candidates.push_back(e);
              }
            }
          }
          HOPSIM_ASSERT(candidates.size() >= top_k, "top-{} among {} experts", top_k,
                        candidates.size());
          pick(draws, std::span<int>(candidates), top_k);
        }
        for (std::size_t k = 0; k < top_k; ++k) {
          chosen.push_back(copy_of(candidates[k]));
        }
      }
      for (std::size_t k = 0; k < top_k; ++k) {
        const auto expert = static_cast<std::size_t>(candidates[k]);
        if (taken[expert] >= capacity) {
          ++dropped;
          continue;
        }
        ++taken[expert];
        const auto dst = static_cast<std::size_t>(chosen[k].first);
        ++slot_tokens[dst][static_cast<std::size_t>(chosen[k].second)];
        m.selections.bytes[src * n + dst] += token_bytes.n;
        if (gpu_hit[dst] != stamp) {
          gpu_hit[dst] = stamp;
          m.gpu.bytes[src * n + dst] += token_bytes.n;
        }
        const std::size_t node = l.node_of_rank[dst];
        if (node_landed[node] != stamp) {
          node_landed[node] = stamp;
          m.to_node[src * nodes + node] += token_bytes.n;
        }
      }
    }
  }
  if (load != nullptr) {
    load->expert_tokens = std::move(taken);
    load->slot_tokens = std::move(slot_tokens);
    load->dropped = dropped;
  }
  return m;
}

}  // namespace hopsim::work
