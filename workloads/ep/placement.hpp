// Where experts live: the even placement, redundant copies of hot experts, an explicit
// placement's checks, and the layout routing reads (copies per expert, experts per node).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/problem.hpp"
#include "topology/cluster.hpp"
#include "workloads/ep/routing_spec.hpp"

namespace hopsim::work {

/// Rank g of `ranks` hosts experts [g x experts / ranks, (g + 1) x experts / ranks).
std::vector<std::vector<int>> even_placement(std::int64_t experts, std::size_t ranks);

/// The even placement plus `extra_per_rank` slots on every rank for redundant copies, as
/// DeepSeek-V3's inference does with hot experts: each extra copy goes to the expert whose
/// copies would each carry the most of the expected selections (`routing`'s popularity), and
/// copies, heaviest first, to the least loaded rank with a free slot that lacks the expert.
std::vector<std::vector<int>> redundant_placement(const MoeRouting& routing, std::size_t ranks,
                                                  std::int64_t extra_per_rank);

/// Problems (under `at`) of `extra_per_rank` redundant slots per rank: a rank hosts each expert
/// at most once, so beside its even share it has room for copies of the other experts only.
Problems check_redundancy(std::int64_t experts, std::size_t ranks, std::int64_t extra_per_rank,
                          const std::string& at = "/redundant_experts");

/// Problems of an explicit placement over `n` ranks (under `at`): one list per rank, each
/// expert somewhere, ids in range, no expert twice on one rank.
Problems check_placement(const MoeRouting& r, std::size_t n, const std::string& at);

/// Where experts live: per rank (index in the group) its slots' experts, per expert its copies
/// (rank index, slot), per node slot the distinct experts on it; nodes are numbered by slot in
/// the order of their ids.
struct ExpertLayout {
  std::vector<std::vector<int>> slots;                    // per rank
  std::vector<std::vector<std::pair<int, int>>> copies;   // per expert: (rank, slot)
  std::vector<std::size_t> node_of_rank;                  // node slot per rank
  std::vector<std::vector<int>> experts_of_node;          // distinct, per node slot
};

/// The layout of `r`'s placement (or the even one) over `n` ranks, rank g on node node_of(g).
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

/// The layout over `ranks` of `cluster`.
ExpertLayout layout(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster,
                    const MoeRouting& r);

}  // namespace hopsim::work
