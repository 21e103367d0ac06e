// Token routing by a seeded generator whose output is the same on every platform.
#include "workloads/ep/moe_routing.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/ep/modulo_draws.hpp"
#include "workloads/ep/routing_rng.hpp"

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
    out.push_back({at + "/top_k", fmt::format("must be in [1, {}] (the experts), got {}",
                                              r.experts, r.top_k)});
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

namespace {

// One EP group's routing, token by token: the layout, what one token's draws share (stamps
// instead of cleared flags: a token costs O(top_k) here, not O(ranks)), and the matrices and
// loads it fills.
class TokenRouter {
 public:
  TokenRouter(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster, const MoeRouting& r,
              Bytes token_bytes);
  TokenRouter(const TokenRouter&) = delete;
  TokenRouter& operator=(const TokenRouter&) = delete;

  /// Routes every token of every rank, then hands over the matrix (and the loads).
  TwoTierMatrix route(RoutingLoad* load);

 private:
  bool allowed(int e) const;
  std::pair<int, int> copy_of(int e) const;
  void reach(std::pair<int, int> c);
  void choose_weighted();
  void choose_uniform();
  void land(std::size_t src);

  const MoeRouting& r_;
  const ExpertLayout l_;
  const std::size_t n_;
  const std::size_t nodes_;
  const std::size_t node_limit_;
  const std::size_t top_k_;
  const Bytes token_bytes_;
  const std::int64_t capacity_;
  const bool weighted_;
  TwoTierMatrix m_;
  std::vector<std::int64_t> taken_;
  std::vector<std::vector<std::int64_t>> slot_tokens_;
  std::int64_t dropped_ = 0;
  RoutingRng rng_;
  Popularity popular_;
  std::vector<int> node_pool_;
  std::vector<int> candidates_;
  std::vector<std::pair<int, int>> chosen_;  // per selection: the copy (rank, slot)
  std::vector<std::uint64_t> gpu_hit_;
  std::vector<std::uint64_t> node_hit_;     // the token may reach the node
  std::vector<std::uint64_t> node_landed_;  // a selection of the token landed there
  std::vector<std::uint64_t> expert_hit_;
  std::uint64_t stamp_ = 0;
  std::size_t reached_ = 0;  // nodes the token reaches
  bool disjoint_ = false;
  ModuloDraws draws_;
  std::vector<int> listing_;  // the chosen nodes' experts, in order (disjoint only)
};

// Capacity: a share of the group's selections, n x tokens x top_k / experts, times the factor.
std::int64_t capacity_of(const MoeRouting& r, std::size_t n) {
  const double even = static_cast<double>(n) * static_cast<double>(r.tokens_per_gpu) *
                      static_cast<double>(r.top_k) / static_cast<double>(r.experts);
  return r.capacity_factor > 0 ? static_cast<std::int64_t>(std::ceil(r.capacity_factor * even))
                               : std::numeric_limits<std::int64_t>::max();
}

TokenRouter::TokenRouter(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster,
                         const MoeRouting& r, Bytes token_bytes)
    : r_(r),
      l_(layout(ranks, cluster, r)),
      n_(ranks.size()),
      nodes_(l_.experts_of_node.size()),
      node_limit_(r.max_nodes_per_token <= 0
                      ? nodes_
                      : std::min(nodes_, static_cast<std::size_t>(r.max_nodes_per_token))),
      top_k_(static_cast<std::size_t>(r.top_k)),
      token_bytes_(token_bytes),
      capacity_(capacity_of(r, ranks.size())),
      weighted_(r.distribution != RoutingDistribution::Uniform || !r.bias.empty()),
      taken_(static_cast<std::size_t>(r.experts), 0),
      slot_tokens_(n_),
      rng_(r.seed),
      popular_(weighted_ ? weights(r) : Popularity{}),
      node_pool_(nodes_),
      gpu_hit_(n_, 0),
      node_hit_(nodes_, 0),
      node_landed_(nodes_, 0),
      expert_hit_(static_cast<std::size_t>(r.experts), 0),
      draws_(rng_, std::max<std::uint64_t>(nodes_, static_cast<std::uint64_t>(r.experts))) {
  m_.gpu = ByteMatrix{n_, std::vector<std::int64_t>(n_ * n_, 0)};
  m_.selections = ByteMatrix{n_, std::vector<std::int64_t>(n_ * n_, 0)};
  m_.nodes = nodes_;
  m_.to_node.assign(n_ * nodes_, 0);
  for (std::size_t g = 0; g < n_; ++g) {
    slot_tokens_[g].assign(l_.slots[g].size(), 0);
  }
  // Uniform routing when no expert is on two nodes: the candidates are the chosen nodes'
  // experts one after another, copied block by block, with no per-expert check for one seen
  // on an earlier node (the same list, so the same picks, several times faster).
  std::size_t listed = 0;
  for (const auto& e : l_.experts_of_node) {
    listed += e.size();
  }
  disjoint_ = listed == static_cast<std::size_t>(std::count_if(
                            l_.copies.begin(), l_.copies.end(),
                            [](const auto& c) { return !c.empty(); }));
  listing_.resize(disjoint_ ? listed : 0);
}

// May the token take expert e (not yet chosen, with a copy on a node it reaches or may)?
bool TokenRouter::allowed(int e) const {
  if (expert_hit_[static_cast<std::size_t>(e)] == stamp_) {
    return false;
  }
  if (reached_ < node_limit_) {
    return true;
  }
  for (const auto& [g, k] : l_.copies[static_cast<std::size_t>(e)]) {
    if (node_hit_[l_.node_of_rank[static_cast<std::size_t>(g)]] == stamp_) {
      return true;
    }
  }
  return false;
}

// The copy of e the token sends to: one on a node it reaches, else any (a node it may still
// reach); among those the one that took the fewest selections so far (ties: the first).
std::pair<int, int> TokenRouter::copy_of(int e) const {
  const auto& copies = l_.copies[static_cast<std::size_t>(e)];
  if (copies.size() == 1) {
    return copies.front();
  }
  const auto tokens = [&](std::pair<int, int> c) {
    return slot_tokens_[static_cast<std::size_t>(c.first)][static_cast<std::size_t>(c.second)];
  };
  std::pair<int, int> best{-1, -1};
  bool best_reached = false;
  for (const auto& c : copies) {
    const bool on = node_hit_[l_.node_of_rank[static_cast<std::size_t>(c.first)]] == stamp_;
    if (best.first < 0 || (on && !best_reached) ||
        (on == best_reached && tokens(c) < tokens(best))) {
      best = c;
      best_reached = on;
    }
  }
  return best;
}

void TokenRouter::reach(std::pair<int, int> c) {
  const std::size_t node = l_.node_of_rank[static_cast<std::size_t>(c.first)];
  if (node_hit_[node] != stamp_) {
    node_hit_[node] = stamp_;
    ++reached_;
  }
}

// Zipf, or any bias: experts drawn one after another by weight among those still allowed.
void TokenRouter::choose_weighted() {
  for (std::size_t k = 0; k < top_k_; ++k) {
    int e = -1;
    for (int attempt = 0; attempt < 64 && e < 0; ++attempt) {
      const int c = draw_expert(rng_, popular_);
      e = allowed(c) ? c : -1;
    }
    if (e < 0) {  // the allowed experts are rare: one exact draw among them
      e = draw_allowed(rng_, popular_, [this](int x) { return allowed(x); });
    }
    HOPSIM_ASSERT(e >= 0, "top-{} within {} nodes", top_k_, node_limit_);
    expert_hit_[static_cast<std::size_t>(e)] = stamp_;
    const std::pair<int, int> c = copy_of(e);
    reach(c);
    candidates_.push_back(e);
    chosen_.push_back(c);
  }
}

// Uniform without bias: the experts of node_limit random nodes, then top-k among them.
void TokenRouter::choose_uniform() {
  std::iota(node_pool_.begin(), node_pool_.end(), 0);
  pick(draws_, std::span<int>(node_pool_), node_limit_);
  if (disjoint_) {  // the chosen nodes' experts, block by block
    std::size_t size = 0;
    for (std::size_t k = 0; k < node_limit_; ++k) {
      const auto node = static_cast<std::size_t>(node_pool_[k]);
      node_hit_[node] = stamp_;
      const std::vector<int>& on = l_.experts_of_node[node];
      std::copy(on.begin(), on.end(), listing_.begin() + static_cast<std::ptrdiff_t>(size));
      size += on.size();
    }
    HOPSIM_ASSERT(size >= top_k_, "top-{} among {} experts", top_k_, size);
    pick(draws_, std::span<int>(listing_.data(), size), top_k_);
    candidates_.assign(listing_.begin(), listing_.begin() + static_cast<std::ptrdiff_t>(top_k_));
  } else {
    for (std::size_t k = 0; k < node_limit_; ++k) {
      const auto node = static_cast<std::size_t>(node_pool_[k]);
      node_hit_[node] = stamp_;
      for (int e : l_.experts_of_node[node]) {
        if (expert_hit_[static_cast<std::size_t>(e)] != stamp_) {  // on two chosen nodes
          expert_hit_[static_cast<std::size_t>(e)] = stamp_;
          candidates_.push_back(e);
        }
      }
    }
    HOPSIM_ASSERT(candidates_.size() >= top_k_, "top-{} among {} experts", top_k_,
                  candidates_.size());
    pick(draws_, std::span<int>(candidates_), top_k_);
  }
  for (std::size_t k = 0; k < top_k_; ++k) {
    chosen_.push_back(copy_of(candidates_[k]));
  }
}

// The token's selections from rank `src`, within the capacity: one copy per GPU, one per node
// over InfiniBand.
void TokenRouter::land(std::size_t src) {
  for (std::size_t k = 0; k < top_k_; ++k) {
    const auto expert = static_cast<std::size_t>(candidates_[k]);
    if (taken_[expert] >= capacity_) {
      ++dropped_;
      continue;
    }
    ++taken_[expert];
    const auto dst = static_cast<std::size_t>(chosen_[k].first);
    ++slot_tokens_[dst][static_cast<std::size_t>(chosen_[k].second)];
    m_.selections.bytes[src * n_ + dst] += token_bytes_.n;
    if (gpu_hit_[dst] != stamp_) {
      gpu_hit_[dst] = stamp_;
      m_.gpu.bytes[src * n_ + dst] += token_bytes_.n;
    }
    const std::size_t node = l_.node_of_rank[dst];
    if (node_landed_[node] != stamp_) {
      node_landed_[node] = stamp_;
      m_.to_node[src * nodes_ + node] += token_bytes_.n;
    }
  }
}

TwoTierMatrix TokenRouter::route(RoutingLoad* load) {
  for (std::size_t src = 0; src < n_; ++src) {
    for (std::int64_t t = 0; t < r_.tokens_per_gpu; ++t) {
      ++stamp_;
      reached_ = 0;
      candidates_.clear();
      chosen_.clear();
      if (weighted_) {
        choose_weighted();
      } else {
        choose_uniform();
      }
      land(src);
    }
  }
  if (load != nullptr) {
    load->expert_tokens = std::move(taken_);
    load->slot_tokens = std::move(slot_tokens_);
    load->dropped = dropped_;
  }
  return std::move(m_);
}

}  // namespace

TwoTierMatrix route_tokens(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster,
                           const MoeRouting& r, Bytes token_bytes, RoutingLoad* load) {
  TokenRouter router(ranks, cluster, r, token_bytes);
  return router.route(load);
}

}  // namespace hopsim::work
