// The two-tier (DeepEP normal-kernel) all-to-all: InfiniBand once per destination node, then
// NVLink, pipelined piece by piece; combine in reverse. Also its paced form (a library a data
// file prices that relays the same way). DeepEP's kernels are not NCCL's: flows
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

NodeMap map_nodes(std::span<const topo::GpuId> ranks, const topo::Cluster& cluster) {
  std::map<topo::NodeId, int> slot_of_node;
  for (const topo::GpuId r : ranks) {
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
    const topo::GpuId gpu{ranks[i]};
    const int slot = slot_of_node[cluster.node_of(gpu)];
    m.slot_of_rank.push_back(slot);
    const auto s = static_cast<std::size_t>(slot);
    m.index[s][static_cast<std::size_t>(cluster.local_of(gpu))] = static_cast<int>(i);
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

// Advances `k` to the segment of `segments` (contiguous, in order) that holds byte `at`; calls
// with `at` never decreasing cost O(segments) in all.
void advance_to(std::span<const Collectives::Segment> segments, std::int64_t at, std::size_t& k) {
  while (k + 1 < segments.size() && segments[k + 1].from <= at) {
    ++k;
  }
}

}  // namespace

Handle Collectives::all_to_all_two_tier(std::span<const topo::GpuId> ranks, const TwoTierMatrix& m,
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
            const double eff = m.nodes == 1 ? o.intranode_efficiency : o.nvlink_efficiency;
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

Handle Collectives::all_to_all_paced_relayed(std::span<const topo::GpuId> ranks,
                                             const TwoTierMatrix& m, const PacedOptions& options,
                                             std::span<const PlanTaskId> after) {
  const NodeMap nodes = map_nodes(ranks, cluster_);
  HOPSIM_ASSERT(m.gpu.n == ranks.size() && m.nodes == nodes.members.size() &&
                    m.to_node.size() == m.gpu.n * m.nodes,
                "relayed matrix of {} ranks and {} nodes for {} ranks on {} nodes", m.gpu.n,
                m.nodes, ranks.size(), nodes.members.size());
  const std::size_t n = ranks.size();
  ByteMatrix flows{n, std::vector<std::int64_t>(n * n, 0)};
  for (std::size_t i = 0; i < n; ++i) {
    const auto own_slot = static_cast<std::size_t>(nodes.slot_of_rank[i]);
    const auto local = static_cast<std::size_t>(cluster_.local_of(ranks[i]));
    for (std::size_t slot = 0; slot < m.nodes; ++slot) {
      const int relay = nodes.index[slot][local];
      if (slot == own_slot || relay < 0) {
        for (const std::size_t j : nodes.members[slot]) {
          flows.bytes[i * n + j] += j != i ? m.gpu.at(i, j) : 0;
        }
        continue;
      }
      const auto r = static_cast<std::size_t>(relay);
      flows.bytes[i * n + r] += m.to_node[i * m.nodes + slot];
      for (const std::size_t j : nodes.members[slot]) {
        flows.bytes[r * n + j] += j != r ? m.gpu.at(i, j) : 0;
      }
    }
  }
  return all_to_all_paced(ranks, flows, options, after);
}

Collectives::Stages Collectives::stages(std::int64_t total, const TwoTierOptions& o) {
  Stages st;
  const std::vector<std::int64_t> p = pieces(total, o.chunk_bytes);
  if (o.pieces == Pieces::Streamed && p.size() > 2) {
    // First stage: the first piece, then the rest at once; second stage: all but the last
    // piece once the first has landed, then the last piece once everything has.
    st.first = {{0, p.front()}, {p.front(), total - p.front()}};
    st.second = {{0, total - p.back()}, {total - p.back(), p.back()}};
    return st;
  }
  std::int64_t from = 0;
  for (std::int64_t size : p) {
    st.first.push_back({from, size});
    from += size;
  }
  st.second = st.first;
  return st;
}

void Collectives::dispatch_through(std::span<const topo::GpuId> ranks, const TwoTierMatrix& m,
                                   std::span<const std::size_t> members, const NodeSend& s,
                                   const TwoTierOptions& o, PlanTaskId first, Handle& h) {
  const topo::GpuId src = ranks[s.from];
  const topo::GpuId relay = ranks[s.relay];
  const Stages st = stages(s.ib_bytes, o);
  // Each piece crosses InfiniBand after the one before; a piece's NVLink forwards start once
  // the InfiniBand piece holding its first byte has landed, each after the one before it.
  std::vector<PlanTaskId> landed;
  PlanTaskId ib_free = first;
  for (const Segment& seg : st.first) {
    const PlanTaskId ib_after[] = {ib_free};
    const Hop ib = route_hop(src, relay, seg.size, ib_after, "ib");
    landed.push_back(ib.arrived);
    ib_free = ib.sent;
    h.done.push_back(ib.arrived);
  }
  std::vector<PlanTaskId> nvl_free(members.size(), first);
  std::size_t feeding = 0;  // the InfiniBand piece holding the segment's first byte
  for (const Segment& seg : st.second) {
    advance_to(st.first, seg.from, feeding);
    const PlanTaskId in = landed[feeding];
    for (std::size_t k = 0; k < members.size(); ++k) {
      const std::size_t j = members[k];
      const std::int64_t part = share(m.gpu.at(s.from, j), s.ib_bytes, seg.from, seg.size);
      if (j == s.relay || part <= 0) {
        continue;
      }
      const PlanTaskId fwd_after[] = {in, nvl_free[k]};
      const Hop fwd =
          route_hop(relay, ranks[j], part, fwd_after, "nvlink forward", o.nvlink_efficiency);
      h.done.push_back(fwd.arrived);
      nvl_free[k] = fwd.sent;
    }
  }
}

void Collectives::combine_through(std::span<const topo::GpuId> ranks, const TwoTierMatrix& m,
                                  std::span<const std::size_t> members, const NodeSend& s,
                                  const TwoTierOptions& o, PlanTaskId first, Handle& h) {
  const topo::GpuId dst = ranks[s.from];
  const topo::GpuId relay = ranks[s.relay];
  const Stages st = stages(s.ib_bytes, o);
  // The GPUs of the node send their parts of each piece to the relay, each after the one
  // before; the relay reduces and sends a piece over InfiniBand once every part of the piece
  // holding its first byte has landed, after the piece before it.
  std::vector<std::vector<PlanTaskId>> gathered(st.first.size(), std::vector<PlanTaskId>{});
  std::vector<PlanTaskId> nvl_free(members.size(), first);
  for (std::size_t g = 0; g < st.first.size(); ++g) {
    const Segment& seg = st.first[g];
    for (std::size_t k = 0; k < members.size(); ++k) {
      const std::size_t j = members[k];
      const std::int64_t part = share(m.gpu.at(s.from, j), s.ib_bytes, seg.from, seg.size);
      if (j == s.relay || part <= 0) {
        continue;
      }
      const PlanTaskId gather_after[] = {first, nvl_free[k]};
      const Hop gather =
          route_hop(ranks[j], relay, part, gather_after, "nvlink gather", o.nvlink_efficiency);
      gathered[g].push_back(gather.arrived);
      nvl_free[k] = gather.sent;
    }
  }
  PlanTaskId ib_free = first;
  std::size_t feeding = 0;  // the gathered piece holding the segment's first byte
  for (const Segment& seg : st.second) {
    advance_to(st.first, seg.from, feeding);
    std::vector<PlanTaskId> ready{ib_free};
    const std::vector<PlanTaskId>& parts = gathered[feeding];
    ready.insert(ready.end(), parts.begin(), parts.end());
    const Hop ib = route_hop(relay, dst, seg.size, ready, "ib");
    h.done.push_back(ib.arrived);
    ib_free = ib.sent;
  }
}

TwoTierMatrix Collectives::without_dedup(std::span<const topo::GpuId> ranks,
                                         const topo::Cluster& cluster, ByteMatrix gpu) {
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
