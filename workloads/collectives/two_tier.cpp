// The two-tier (DeepEP normal-kernel) all-to-all: InfiniBand once per destination node, then
// NVLink, pipelined piece by piece; combine in reverse. DeepEP's kernels are not NCCL's: flows
// pay their route's latency (links and software overhead), and there is no NCCL base latency.
#include <cmath>
#include <map>
#include <string>

#include "sim/assert.hpp"
#include "workloads/collectives/collectives.hpp"

namespace hopsim::work {
namespace {

// Index in `ranks` of each (node slot, local index); -1 where the rank set has no such GPU.
struct NodeMap {
  std::vector<int> slot_of_rank;                  // per index in ranks
  std::vector<std::vector<int>> index;            // [slot][local]
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

// `total` bytes in pieces of at most `chunk` (one piece when chunk is 0).
std::vector<std::int64_t> pieces(std::int64_t total, std::int64_t chunk) {
  std::vector<std::int64_t> out;
  if (chunk <= 0 || chunk >= total) {
    out.push_back(total);
    return out;
  }
  for (std::int64_t done = 0; done < total; done += chunk) {
    out.push_back(std::min(chunk, total - done));
  }
  return out;
}

// The share of `part` of `whole` bytes that piece [from, from + size) carries, split so that
// the pieces' shares add up to `part` exactly.
// 128-bit products: part and x are each below 2^62 bytes.
__extension__ typedef __int128 Wide;

std::int64_t share(std::int64_t part, std::int64_t whole, std::int64_t from, std::int64_t size) {
  const auto upto = [&](std::int64_t x) {
    return static_cast<std::int64_t>(static_cast<Wide>(part) * x / whole);
  };
  return upto(from + size) - upto(from);
}

}  // namespace

Handle Collectives::all_to_all_two_tier(std::span<const int> ranks, const TwoTierMatrix& m,
                                        const TwoTierOptions& o,
                                        std::span<const PlanTaskId> after) {
  const NodeMap nodes = map_nodes(ranks, cluster_);
  HOPSIM_ASSERT(m.gpu.n == ranks.size() && m.nodes == nodes.members.size() &&
                    m.to_node.size() == m.gpu.n * m.nodes,
                "two-tier matrix of {} ranks and {} nodes for {} ranks on {} nodes", m.gpu.n,
                m.nodes, ranks.size(), nodes.members.size());
  const HopLatency none{Time{}, Time{}, Time{}};
  const PlanTaskId first[] = {start(none, after)};
  Handle h;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto own_slot = static_cast<std::size_t>(nodes.slot_of_rank[i]);
    const auto local = static_cast<std::size_t>(cluster_.local_of(ranks[i]));
    for (std::size_t slot = 0; slot < m.nodes; ++slot) {
      const int relay = nodes.index[slot][local];
      if (slot == own_slot || relay < 0) {  // same node, or no same-rail GPU there: direct
        for (std::size_t j : nodes.members[slot]) {
          if (j != i && m.gpu.at(i, j) > 0) {
            const std::int64_t bytes = m.gpu.at(i, j);
            const double eff = o.nvlink_efficiency;
            h.done.push_back(o.combine
                                 ? route_hop(ranks[j], ranks[i], bytes, first, "nvlink", eff).arrived
                                 : route_hop(ranks[i], ranks[j], bytes, first, "nvlink", eff).arrived);
          }
        }
        continue;
      }
      const std::int64_t ib = m.to_node[i * m.nodes + slot];
      if (ib > 0) {
        const NodeSend send{i, static_cast<std::size_t>(relay), slot, ib};
        if (o.combine) {
          combine_through(ranks, m, nodes.members[slot], send, o, first[0], h);
        } else {
          dispatch_through(ranks, m, nodes.members[slot], send, o, first[0], h);
        }
      }
    }
  }
  if (h.done.empty()) {
    h.done.push_back(first[0]);
  }
  return h;
}

void Collectives::dispatch_through(std::span<const int> ranks, const TwoTierMatrix& m,
                                   std::span<const std::size_t> members, const NodeSend& s,
                                   const TwoTierOptions& o, PlanTaskId first, Handle& h) {
  const int src = ranks[s.from];
  const int relay = ranks[s.relay];
  PlanTaskId ib_free = first;
  std::vector<PlanTaskId> nvl_free(members.size(), first);
  std::int64_t from = 0;
  for (std::int64_t size : pieces(s.ib_bytes, o.chunk_bytes)) {
    // Each piece crosses InfiniBand after the one before, then fans out over NVLink.
    const PlanTaskId ib_after[] = {ib_free};
    const Hop ib = route_hop(src, relay, size, ib_after, "ib");
    const PlanTaskId landed = ib.arrived;
    ib_free = ib.sent;
    h.done.push_back(landed);
    for (std::size_t k = 0; k < members.size(); ++k) {
      const std::size_t j = members[k];
      const std::int64_t part = share(m.gpu.at(s.from, j), s.ib_bytes, from, size);
      if (j == s.relay || part <= 0) {
        continue;
      }
      const PlanTaskId fwd_after[] = {landed, nvl_free[k]};
      const Hop fwd =
          route_hop(relay, ranks[j], part, fwd_after, "nvlink forward", o.nvlink_efficiency);
      h.done.push_back(fwd.arrived);
      nvl_free[k] = fwd.sent;
    }
    from += size;
  }
}

void Collectives::combine_through(std::span<const int> ranks, const TwoTierMatrix& m,
                                  std::span<const std::size_t> members, const NodeSend& s,
                                  const TwoTierOptions& o, PlanTaskId first, Handle& h) {
  const int dst = ranks[s.from];
  const int relay = ranks[s.relay];
  PlanTaskId ib_free = first;
  std::vector<PlanTaskId> nvl_free(members.size(), first);
  std::int64_t from = 0;
  for (std::int64_t size : pieces(s.ib_bytes, o.chunk_bytes)) {
    // The GPUs of the node send their part of the piece to the relay, which reduces it and
    // sends it back over InfiniBand once all parts have landed.
    std::vector<PlanTaskId> ready{ib_free};
    for (std::size_t k = 0; k < members.size(); ++k) {
      const std::size_t j = members[k];
      const std::int64_t part = share(m.gpu.at(s.from, j), s.ib_bytes, from, size);
      if (j == s.relay || part <= 0) {
        continue;
      }
      const PlanTaskId gather_after[] = {first, nvl_free[k]};
      const Hop gather =
          route_hop(ranks[j], relay, part, gather_after, "nvlink gather", o.nvlink_efficiency);
      ready.push_back(gather.arrived);
      nvl_free[k] = gather.sent;
    }
    const Hop ib = route_hop(relay, dst, size, ready, "ib");
    h.done.push_back(ib.arrived);
    ib_free = ib.sent;
    from += size;
  }
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
