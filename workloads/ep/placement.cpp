// Expert placement (placement.hpp).
#include "workloads/ep/placement.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/ep/popularity.hpp"

namespace hopsim::work {

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

ExpertLayout layout(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster,
                    const MoeRouting& r) {
  return layout_of(
      ranks.size(), [&](std::size_t g) { return cluster.node_of(ranks[g]).value(); }, r);
}

namespace {

// Expected share of the selections per expert: the popularity's weights (bias included);
// training routing's long-run popularity is even (each batch's draw is not known in advance).
std::vector<double> expected_shares(const MoeRouting& r) {
  const auto experts = static_cast<std::size_t>(r.experts);
  std::vector<double> weight(experts, 1.0 / static_cast<double>(experts));
  if ((r.distribution != RoutingDistribution::Uniform &&
       r.distribution != RoutingDistribution::Training) ||
      !r.bias.empty() || r.uniform_share > 0) {
    const Popularity p = weights(r);
    for (std::size_t e = 0; e < experts; ++e) {
      weight[e] = (p.cdf[e] - (e == 0 ? 0.0 : p.cdf[e - 1])) / p.cdf.back();
    }
  }
  return weight;
}

// Copies being placed: per expert its share and its copies so far.
struct Copies {
  std::vector<double> weight;
  std::vector<int> count;
  double per_copy(std::size_t e) const { return weight[e] / count[e]; }
  double per_copy(int e) const { return per_copy(static_cast<std::size_t>(e)); }
  // Among the experts `may` allows, the one whose copies carry the most each (ties: lower id),
  // or count.size().
  template <class May>
  std::size_t heaviest(May may) const {
    std::size_t best = count.size();
    for (std::size_t e = 0; e < count.size(); ++e) {
      if (may(e) && (best == count.size() || per_copy(e) > per_copy(best))) {
        best = e;
      }
    }
    return best;
  }
};

// The experts of the `extra` extra slots: each to the expert whose copies carry the most each,
// at most one copy per rank; counted in `c`.
std::vector<int> choose_replicas(Copies& c, std::size_t ranks, std::size_t extra) {
  std::vector<int> replicas;
  for (std::size_t i = 0; i < extra; ++i) {
    const std::size_t best =
        c.heaviest([&](std::size_t e) { return static_cast<std::size_t>(c.count[e]) < ranks; });
    ++c.count[best];
    replicas.push_back(static_cast<int>(best));
  }
  return replicas;
}

// Each replica, heaviest per copy first, to the least loaded rank with a free slot (of `full`)
// that does not host the expert yet (ties: lower rank). Where every rank with a free slot hosts
// it already, that slot takes the expert it lacks whose copies carry the most each (a rank
// with a free slot lacks some: it holds fewer than all experts).
void place_replicas(std::vector<std::vector<int>>& slots, std::vector<int> replicas, Copies& c,
                    std::size_t full) {
  const std::size_t ranks = slots.size();
  std::vector<double> rank_load(ranks, 0.0);
  for (std::size_t g = 0; g < ranks; ++g) {
    for (int e : slots[g]) {
      rank_load[g] += c.per_copy(e);
    }
  }
  std::stable_sort(replicas.begin(), replicas.end(),
                   [&](int a, int b) { return c.per_copy(a) > c.per_copy(b); });
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
      best = open;
      --c.count[static_cast<std::size_t>(e)];
      const std::size_t other =
          c.heaviest([&](std::size_t f) { return !hosts(best, static_cast<int>(f)); });
      e = static_cast<int>(other);
      ++c.count[other];
    }
    slots[best].push_back(e);
    rank_load[best] += c.per_copy(e);
  }
}

}  // namespace

std::vector<std::vector<int>> redundant_placement(const MoeRouting& r, std::size_t ranks,
                                                  std::int64_t extra_per_rank) {
  std::vector<std::vector<int>> slots = even_placement(r.experts, ranks);
  if (extra_per_rank <= 0) {
    return slots;
  }
  // Each rank holds at most every expert once, so there is room (check_redundancy).
  HOPSIM_ASSERT(check_redundancy(r.experts, ranks, extra_per_rank).empty(),
                "{} extra slots per rank for {} experts over {} ranks", extra_per_rank,
                r.experts, ranks);
  Copies c{expected_shares(r), std::vector<int>(static_cast<std::size_t>(r.experts), 1)};
  std::vector<int> replicas =
      choose_replicas(c, ranks, ranks * static_cast<std::size_t>(extra_per_rank));
  const std::size_t full = slots.front().size() + static_cast<std::size_t>(extra_per_rank);
  place_replicas(slots, std::move(replicas), c, full);
  return slots;
}

}  // namespace hopsim::work
