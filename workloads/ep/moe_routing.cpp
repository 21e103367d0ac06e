// The routing's checks: the experts' spread and placement, and whether top-k distinct experts
// exist within every token's node limit (the routing itself: token_router.cpp).
#include "workloads/ep/moe_routing.hpp"

#include <algorithm>
#include <bit>
#include <iterator>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include <fmt/format.h>

namespace hopsim::work {
namespace {

// Subsets of nodes a feasibility check enumerates at most.
constexpr double kMaxNodeSubsets = 2e5;

// The live experts of each node that has one (`live`: those a token may ever choose).
std::vector<std::vector<int>> live_experts_of_nodes(const ExpertLayout& l,
                                                    const std::vector<char>& live) {
  std::vector<std::vector<int>> of_node;
  for (const auto& on : l.experts_of_node) {
    std::vector<int> here;
    std::copy_if(on.begin(), on.end(), std::back_inserter(here),
                 [&](int e) { return live[static_cast<std::size_t>(e)] != 0; });
    if (!here.empty()) {
      of_node.push_back(std::move(here));
    }
  }
  return of_node;
}

// The smallest union of the experts of `limit` of the nodes, over every such set of nodes
// (`experts` ids in all), by bit sets.
std::int64_t smallest_union(const std::vector<std::vector<int>>& of_node, std::size_t limit,
                            std::size_t experts) {
  const std::size_t nodes = of_node.size();
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
      return fewest;
    }
    ++pick_of[i - 1];
    for (std::size_t j = i; j < limit; ++j) {
      pick_of[j] = pick_of[j - 1] + 1;
    }
  }
}

// The fewest distinct experts a token limited to `limit` nodes can choose from, or a lower
// bound of it, counting only the experts it may ever choose (`live`): a token reaches only
// nodes with such an expert. With the even placement, the experts of the nodes with the fewest;
// else the smallest union over every set of that many nodes or, when there are too many sets
// to try, the limit-th smallest node's count (any union of that many nodes has at least as
// many).
std::int64_t fewest_choice(const ExpertLayout& l, std::size_t limit, bool even,
                           const std::vector<char>& live) {
  const std::vector<std::vector<int>> of_node = live_experts_of_nodes(l, live);
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
  return smallest_union(of_node, limit, l.copies.size());
}

}  // namespace

Problems check_routing(const MoeRouting& r, std::span<const topo::GpuId> ranks, int gpus_per_node,
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
    out.push_back({at + "/top_k",
                   fmt::format("must be in [1, {}] (the experts), got {}", r.experts, r.top_k)});
    return out;
  }
  const ExpertLayout l = layout_of(
      ranks.size(), [&](std::size_t g) { return ranks[g].value() / gpus_per_node; }, r);
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
    out.push_back(
        {counts_at, fmt::format("{} of the {} counts are non-zero, and a token{} may choose "
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

}  // namespace hopsim::work
