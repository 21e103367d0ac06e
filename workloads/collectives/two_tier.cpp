// The two-tier (DeepEP-style) all-to-all: InfiniBand once per destination node, then NVLink.
#include <map>

#include "sim/assert.hpp"
#include "workloads/collectives/collectives.hpp"

namespace hopsim::work {
namespace {

// Index in `ranks` of each (node slot, local index); -1 where the rank set has no such GPU.
struct NodeMap {
  std::vector<int> slot_of_rank;        // per index in ranks
  std::vector<std::vector<int>> index;  // [slot][local]
  std::vector<std::vector<std::size_t>> members;  // [slot] -> indices in ranks
};

NodeMap map_nodes(std::span<const int> ranks, const topo::Cluster& cluster) {
  std::map<int, int> slot_of_node;
  for (int r : ranks) {
    slot_of_node.emplace(cluster.node_of(r), 0);
  }
  int next = 0;
  for (auto& [node, slot] : slot_of_node) {
    slot = next++;
  }
  NodeMap m;
  m.index.assign(slot_of_node.size(),
                 std::vector<int>(static_cast<std::size_t>(cluster.spec().gpus_per_node), -1));
  m.members.resize(slot_of_node.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int slot = slot_of_node[cluster.node_of(ranks[i])];
    m.slot_of_rank.push_back(slot);
    const auto s = static_cast<std::size_t>(slot);
    m.index[s][static_cast<std::size_t>(cluster.local_of(ranks[i]))] = static_cast<int>(i);
    m.members[s].push_back(i);
  }
  return m;
}

}  // namespace

Handle Collectives::all_to_all_two_tier(std::span<const int> ranks, const TwoTierMatrix& m,
                                        bool combine, std::span<const PlanTaskId> after) {
  const NodeMap nodes = map_nodes(ranks, cluster_);
  HOPSIM_ASSERT(m.gpu.n == ranks.size() && m.nodes == nodes.members.size() &&
                    m.to_node.size() == m.gpu.n * m.nodes,
                "two-tier matrix of {} ranks and {} nodes for {} ranks on {} nodes", m.gpu.n,
                m.nodes, ranks.size(), nodes.members.size());
  const PlanTaskId s = start(after);
  Handle h;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto own_slot = static_cast<std::size_t>(nodes.slot_of_rank[i]);
    const auto local = static_cast<std::size_t>(cluster_.local_of(ranks[i]));
    for (std::size_t slot = 0; slot < m.nodes; ++slot) {
      const int relay = nodes.index[slot][local];
      if (slot == own_slot || relay < 0) {
        // Same node (or no same-rail GPU there): direct flows.
        for (std::size_t j : nodes.members[slot]) {
          if (j != i && m.gpu.at(i, j) > 0) {
            h.done.push_back(combine ? flow(ranks[j], ranks[i], m.gpu.at(i, j), s, "nvlink")
                                     : flow(ranks[i], ranks[j], m.gpu.at(i, j), s, "nvlink"));
          }
        }
        continue;
      }
      const std::int64_t ib = m.to_node[i * m.nodes + slot];
      if (ib <= 0) {
        continue;
      }
      const int r = ranks[static_cast<std::size_t>(relay)];
      if (!combine) {
        const PlanTaskId cross = flow(ranks[i], r, ib, s, "ib");
        h.done.push_back(cross);
        for (std::size_t j : nodes.members[slot]) {
          if (static_cast<int>(j) != relay && m.gpu.at(i, j) > 0) {
            h.done.push_back(flow(r, ranks[j], m.gpu.at(i, j), cross, "nvlink forward"));
          }
        }
        continue;
      }
      // Combine: gather at the relay over NVLink, reduce there, then cross IB once.
      const PlanTaskId cross = plan_.add_flow(r, ranks[i], Bytes{ib}, phase_);
      plan_.set_latency(cross, latency_.net_hop);
      plan_.set_label(cross, "ib");
      bool waits = false;
      for (std::size_t j : nodes.members[slot]) {
        if (static_cast<int>(j) != relay && m.gpu.at(i, j) > 0) {
          plan_.add_dependency(flow(ranks[j], r, m.gpu.at(i, j), s, "nvlink gather"), cross);
          waits = true;
        }
      }
      if (!waits) {
        plan_.add_dependency(s, cross);
      }
      h.done.push_back(cross);
    }
  }
  if (h.done.empty()) {
    h.done.push_back(s);
  }
  return h;
}

TwoTierMatrix Collectives::without_dedup(std::span<const int> ranks, const topo::Cluster& cluster,
                                         ByteMatrix gpu) {
  const NodeMap nodes = map_nodes(ranks, cluster);
  TwoTierMatrix m;
  m.nodes = nodes.members.size();
  m.to_node.assign(gpu.n * m.nodes, 0);
  for (std::size_t i = 0; i < gpu.n; ++i) {
    for (std::size_t j = 0; j < gpu.n; ++j) {
      if (i != j) {
        m.to_node[i * m.nodes + static_cast<std::size_t>(nodes.slot_of_rank[j])] += gpu.at(i, j);
      }
    }
  }
  m.gpu = std::move(gpu);
  return m;
}

}  // namespace hopsim::work
