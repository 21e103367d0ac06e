// route_tokens (moe_routing.hpp): one EP group's tokens routed one by one, by a seeded generator
// whose output is the same on every platform.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "sim/assert.hpp"
#include "workloads/ep/allowed_draws.hpp"
#include "workloads/ep/modulo_draws.hpp"
#include "workloads/ep/moe_routing.hpp"
#include "workloads/ep/routing_rng.hpp"

namespace hopsim::work {
namespace {

// One EP group's routing, token by token: the layout, what one token's draws share (stamps
// instead of cleared flags: a token costs O(top_k) here, not O(ranks)), and the matrices and
// loads it fills. A DeepSeek-V3 layer group routes 2^18 tokens with a dozen draws each, so a
// token reads tables built once (each expert's only copy) and the draws run on a local
// generator.
class TokenRouter {
 public:
  TokenRouter(std::span<const topo::GpuId> ranks, int gpus_per_node, const MoeRouting& r,
              Bytes token_bytes);
  TokenRouter(const TokenRouter&) = delete;
  TokenRouter& operator=(const TokenRouter&) = delete;

  /// Routes every token of every rank, then hands over the matrix (and the loads).
  TwoTierMatrix route(RoutingLoad* load);

 private:
  /// A selection: the expert and the copy it lands on (its rank, and the selections its slot
  /// took so far, in slot_tokens_).
  struct Selection {
    int expert = -1;
    int rank = -1;
    std::int64_t* tokens = nullptr;
  };

  bool allowed(int e) const;
  bool on_chosen(double u, std::size_t k) const;
  const std::vector<int>& allowed_key(std::size_t k);
  Selection copy(int e, std::pair<int, int> rank_slot);
  Selection copy_of(int e);
  Selection least_loaded_copy(int e);
  void reach(const Selection& s);
  void choose_weighted(RoutingRng& rng, std::uint64_t stamp);
  std::size_t list_experts(std::uint64_t stamp);
  void choose_uniform(RoutingRng& rng, std::uint64_t stamp);
  void land(std::size_t src, std::uint64_t stamp);
  template <class Choose>
  void each_token(Choose choose);

  const ExpertLayout l_;
  const std::size_t n_;
  const std::size_t nodes_;
  const std::size_t node_limit_;
  const std::size_t top_k_;
  const std::int64_t tokens_per_rank_;
  const std::int64_t token_bytes_;
  const std::int64_t capacity_;
  const bool weighted_;
  TwoTierMatrix m_;
  std::vector<std::int64_t> taken_;
  // Per rank and slot: the selections it took. Selections point into it: never resized.
  std::vector<std::vector<std::int64_t>> slot_tokens_;
  std::vector<Selection> only_copy_;  // per expert: its copy, or rank -1 (several)
  std::int64_t dropped_ = 0;
  const std::uint64_t seed_;
  Popularity popular_;
  AllowedDraws exact_;             // weighted: a draw among the allowed experts, when 64 missed
  std::vector<int> key_;           // the allowed experts' key (allowed_key)
  std::vector<int> node_pool_;     // 0, 1, ..., nodes - 1 between tokens
  std::vector<int> listing_;       // uniform: the chosen nodes' experts, in order, each once
  std::vector<Selection> chosen_;  // the token's top_k selections
  std::vector<std::uint64_t> gpu_hit_;
  std::vector<std::uint64_t> node_hit_;     // the token may reach the node
  std::vector<std::uint64_t> node_landed_;  // a selection of the token landed there
  std::vector<std::uint64_t> expert_hit_;
  std::uint64_t stamp_ = 0;
  std::size_t reached_ = 0;  // nodes the token reaches
  bool disjoint_ = false;
  ModuloDraws draws_;
};

// Capacity: a share of the group's selections, n x tokens x top_k / experts, times the factor.
std::int64_t capacity_of(const MoeRouting& r, std::size_t n) {
  const double even = static_cast<double>(n) * static_cast<double>(r.tokens_per_gpu) *
                      static_cast<double>(r.top_k) / static_cast<double>(r.experts);
  return r.capacity_factor > 0 ? static_cast<std::int64_t>(std::ceil(r.capacity_factor * even))
                               : std::numeric_limits<std::int64_t>::max();
}

TokenRouter::TokenRouter(std::span<const topo::GpuId> ranks, int gpus_per_node,
                         const MoeRouting& r, Bytes token_bytes)
    : l_(layout_of(
          ranks.size(), [&](std::size_t g) { return ranks[g].value() / gpus_per_node; }, r)),
      n_(ranks.size()),
      nodes_(l_.experts_of_node.size()),
      node_limit_(r.max_nodes_per_token <= 0
                      ? nodes_
                      : std::min(nodes_, static_cast<std::size_t>(r.max_nodes_per_token))),
      top_k_(static_cast<std::size_t>(r.top_k)),
      tokens_per_rank_(r.tokens_per_gpu),
      token_bytes_(token_bytes.n),
      capacity_(capacity_of(r, ranks.size())),
      weighted_(r.distribution != RoutingDistribution::Uniform || !r.bias.empty()),
      taken_(static_cast<std::size_t>(r.experts), 0),
      seed_(r.seed),
      popular_(weighted_ ? weights(r, ranks.size()) : Popularity{}),
      exact_(popular_),
      node_pool_(nodes_),
      chosen_(top_k_),
      gpu_hit_(n_, 0),
      node_hit_(nodes_, 0),
      node_landed_(nodes_, 0),
      expert_hit_(static_cast<std::size_t>(r.experts), 0),
      draws_(std::max<std::uint64_t>(nodes_, static_cast<std::uint64_t>(r.experts))) {
  m_.gpu = ByteMatrix{n_, std::vector<std::int64_t>(n_ * n_, 0)};
  m_.selections = ByteMatrix{n_, std::vector<std::int64_t>(n_ * n_, 0)};
  m_.nodes = nodes_;
  m_.to_node.assign(n_ * nodes_, 0);
  std::iota(node_pool_.begin(), node_pool_.end(), 0);
  for (const std::vector<int>& slots : l_.slots) {
    slot_tokens_.emplace_back(slots.size(), 0);
  }
  for (std::size_t e = 0; e < l_.copies.size(); ++e) {
    Selection only{static_cast<int>(e), -1, nullptr};
    if (l_.copies[e].size() == 1) {
      only = copy(static_cast<int>(e), l_.copies[e].front());
    }
    only_copy_.push_back(only);
  }
  // Uniform routing when no expert is on two nodes: the candidates are the chosen nodes'
  // experts one after another, copied block by block, with no per-expert check for one seen
  // on an earlier node (the same list, so the same picks, several times faster).
  std::size_t listed = 0;
  for (const auto& e : l_.experts_of_node) {
    listed += e.size();
  }
  disjoint_ =
      listed == static_cast<std::size_t>(std::count_if(l_.copies.begin(), l_.copies.end(),
                                                       [](const auto& c) { return !c.empty(); }));
  listing_.resize(weighted_ ? 0 : listed);
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

// The copy of e the token sends to: its only one, or least_loaded_copy.
TokenRouter::Selection TokenRouter::copy_of(int e) {
  const Selection& only = only_copy_[static_cast<std::size_t>(e)];
  return only.rank >= 0 ? only : least_loaded_copy(e);
}

// Of e's copies: one on a node the token reaches, else any (a node it may still reach); among
// those the one that took the fewest selections so far (ties: the first).
TokenRouter::Selection TokenRouter::least_loaded_copy(int e) {
  Selection best{e, -1, nullptr};
  bool best_reached = false;
  for (const std::pair<int, int>& c : l_.copies[static_cast<std::size_t>(e)]) {
    const bool on = node_hit_[l_.node_of_rank[static_cast<std::size_t>(c.first)]] == stamp_;
    const Selection s = copy(e, c);
    if (best.rank < 0 || (on && !best_reached) ||
        (on == best_reached && *s.tokens < *best.tokens)) {
      best = s;
      best_reached = on;
    }
  }
  return best;
}

// The selection of e on its copy in `rank_slot` (a rank of the group, and a slot of it).
TokenRouter::Selection TokenRouter::copy(int e, std::pair<int, int> rank_slot) {
  const auto [g, k] = rank_slot;
  return {e, g, &slot_tokens_[static_cast<std::size_t>(g)][static_cast<std::size_t>(k)]};
}

void TokenRouter::reach(const Selection& s) {
  const std::size_t node = l_.node_of_rank[static_cast<std::size_t>(s.rank)];
  if (node_hit_[node] != stamp_) {
    node_hit_[node] = stamp_;
    ++reached_;
  }
}

// Does u (a draw over all experts' cdf) land on one of the token's first k selections? Then
// expert_at(u) is that expert (u in [cdf[e - 1], cdf[e]), the last expert's up to +inf), which
// is not allowed: the test saves the cdf's search for the draws a skewed routing wastes.
bool TokenRouter::on_chosen(double u, std::size_t k) const {
  const std::vector<double>& cdf = popular_.cdf;
  for (std::size_t j = 0; j < k; ++j) {
    const auto e = static_cast<std::size_t>(chosen_[j].expert);
    if ((e == 0 || cdf[e - 1] <= u) && (e + 1 == cdf.size() || u < cdf[e])) {
      return true;
    }
  }
  return false;
}

// What allowed() depends on after k selections, as AllowedDraws' key: the chosen experts, and
// once the token may reach no other node, -1 and the nodes it reached (sorted).
const std::vector<int>& TokenRouter::allowed_key(std::size_t k) {
  key_.clear();
  for (std::size_t j = 0; j < k; ++j) {
    key_.push_back(chosen_[j].expert);
  }
  std::sort(key_.begin(), key_.end());
  if (reached_ >= node_limit_) {
    key_.push_back(-1);
    const auto from = key_.size();
    for (std::size_t j = 0; j < k; ++j) {
      key_.push_back(static_cast<int>(l_.node_of_rank[static_cast<std::size_t>(chosen_[j].rank)]));
    }
    std::sort(key_.begin() + static_cast<std::ptrdiff_t>(from), key_.end());
    key_.erase(std::unique(key_.begin() + static_cast<std::ptrdiff_t>(from), key_.end()),
               key_.end());
  }
  key_.push_back(-2);  // never empty: the first selection's key is {-2}
  return key_;
}

// Zipf, or any bias: experts drawn one after another by weight among those still allowed.
void TokenRouter::choose_weighted(RoutingRng& rng, std::uint64_t stamp) {
  reached_ = 0;
  for (std::size_t k = 0; k < top_k_; ++k) {
    int e = -1;
    for (int attempt = 0; attempt < 64 && e < 0; ++attempt) {
      const double u = unit(rng) * popular_.cdf.back();  // draw_expert's draw
      if (attempt > 0 && on_chosen(u, k)) {  // after a miss: the routing may be skewed
        continue;
      }
      const int c = expert_at(popular_, u);
      e = allowed(c) ? c : -1;
    }
    if (e < 0) {  // the allowed experts are rare: one exact draw among them (draw_allowed's)
      e = exact_.draw(rng, allowed_key(k), [this](int x) { return allowed(x); });
    }
    HOPSIM_ASSERT(e >= 0, "top-{} within {} nodes", top_k_, node_limit_);
    expert_hit_[static_cast<std::size_t>(e)] = stamp;
    chosen_[k] = copy_of(e);
    reach(chosen_[k]);
  }
}

// The experts of the nodes node_pool_ starts with (node_limit_ of them), in order, each once,
// into listing_; returns how many.
std::size_t TokenRouter::list_experts(std::uint64_t stamp) {
  std::size_t size = 0;
  for (std::size_t k = 0; k < node_limit_; ++k) {
    const auto node = static_cast<std::size_t>(node_pool_[k]);
    node_hit_[node] = stamp;
    const std::vector<int>& on = l_.experts_of_node[node];
    if (disjoint_) {  // block by block
      std::copy(on.begin(), on.end(), listing_.begin() + static_cast<std::ptrdiff_t>(size));
      size += on.size();
      continue;
    }
    for (int e : on) {
      if (expert_hit_[static_cast<std::size_t>(e)] != stamp) {  // not on an earlier node
        expert_hit_[static_cast<std::size_t>(e)] = stamp;
        listing_[size++] = e;
      }
    }
  }
  return size;
}

// Uniform without bias: the experts of node_limit random nodes, then top-k among them.
void TokenRouter::choose_uniform(RoutingRng& rng, std::uint64_t stamp) {
  pick(draws_, rng, std::span<int>(node_pool_), node_limit_);
  const std::size_t size = list_experts(stamp);
  unpick(std::span<int>(node_pool_), node_limit_);
  HOPSIM_ASSERT(size >= top_k_, "top-{} among {} experts", top_k_, size);
  pick(draws_, rng, std::span<int>(listing_.data(), size), top_k_);
  for (std::size_t k = 0; k < top_k_; ++k) {
    chosen_[k] = copy_of(listing_[k]);
  }
}

// The token's selections from rank `src`, within the capacity: one copy per GPU, one per node
// over InfiniBand. Sizes are read into locals once: the matrices' stores could alias members.
void TokenRouter::land(std::size_t src, std::uint64_t stamp) {
  const std::size_t top_k = top_k_;
  const std::int64_t capacity = capacity_;
  const std::int64_t bytes = token_bytes_;
  std::int64_t* const gpu = m_.gpu.bytes.data() + src * n_;
  std::int64_t* const selections = m_.selections.bytes.data() + src * n_;
  std::int64_t* const to_node = m_.to_node.data() + src * nodes_;
  for (std::size_t k = 0; k < top_k; ++k) {
    const Selection& s = chosen_[k];
    std::int64_t& taken = taken_[static_cast<std::size_t>(s.expert)];
    if (taken >= capacity) {
      ++dropped_;
      continue;
    }
    ++taken;
    ++*s.tokens;
    const auto dst = static_cast<std::size_t>(s.rank);
    selections[dst] += bytes;
    if (gpu_hit_[dst] != stamp) {
      gpu_hit_[dst] = stamp;
      gpu[dst] += bytes;
    }
    const std::size_t node = l_.node_of_rank[dst];
    if (node_landed_[node] != stamp) {
      node_landed_[node] = stamp;
      to_node[node] += bytes;
    }
  }
}

// Every token of every rank, its selections chosen by `choose` from a generator of this
// function's own: a local, which the uniform draws keep in registers (the weighted path's
// calls would not let them, were both paths to share one variable).
template <class Choose>
void TokenRouter::each_token(Choose choose) {
  RoutingRng rng(seed_);
  for (std::size_t src = 0; src < n_; ++src) {
    for (std::int64_t t = 0; t < tokens_per_rank_; ++t) {
      const std::uint64_t stamp = ++stamp_;
      choose(rng, stamp);
      land(src, stamp);
    }
  }
}

TwoTierMatrix TokenRouter::route(RoutingLoad* load) {
  if (weighted_) {
    each_token([this](RoutingRng& rng, std::uint64_t stamp) { choose_weighted(rng, stamp); });
  } else {
    each_token([this](RoutingRng& rng, std::uint64_t stamp) { choose_uniform(rng, stamp); });
  }
  if (load != nullptr) {
    load->expert_tokens = std::move(taken_);
    load->slot_tokens = std::move(slot_tokens_);
    load->dropped = dropped_;
  }
  return std::move(m_);
}

}  // namespace

TwoTierMatrix route_tokens(std::span<const topo::GpuId> ranks, int gpus_per_node,
                           const MoeRouting& r, Bytes token_bytes, RoutingLoad* load) {
  TokenRouter router(ranks, gpus_per_node, r, token_bytes);
  return router.route(load);
}

TwoTierMatrix route_tokens(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster,
                           const MoeRouting& r, Bytes token_bytes, RoutingLoad* load) {
  return route_tokens(ranks, cluster.spec().gpus_per_node, r, token_bytes, load);
}

}  // namespace hopsim::work
