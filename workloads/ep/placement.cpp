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

ExpertLayout layout(std::span<const int> ranks, const topo::Cluster& cluster,
                    const MoeRouting& r) {
  return layout_of(
      ranks.size(), [&](std::size_t g) { return cluster.node_of(ranks[g]); }, r);
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

}  // namespace hopsim::work
