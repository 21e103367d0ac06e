// Ring collectives: channels (rail-aligned rings), steps, chunks, the pipelined hop.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "sim/int_math.hpp"
#include "workloads/collectives/collectives.hpp"

namespace hopsim::work {

std::vector<std::vector<topo::GpuId>> Collectives::channel_rings(std::span<const topo::GpuId> ranks,
                                                                 const topo::Cluster& cluster,
                                                                 int channels) {
  // Members of each node, nodes in the order they first appear, members by local index.
  std::vector<topo::NodeId> node_order;
  std::map<topo::NodeId, std::vector<topo::GpuId>> members;
  for (const topo::GpuId r : ranks) {
    auto [it, fresh] = members.try_emplace(cluster.node_of(r));
    if (fresh) {
      node_order.push_back(it->first);
    }
    it->second.push_back(r);
  }
  std::vector<std::vector<topo::GpuId>> rings;
  for (int c = 0; c < channels; ++c) {
    if (node_order.size() == 1) {
      rings.emplace_back(ranks.begin(), ranks.end());
      continue;
    }
    std::vector<topo::GpuId> ring;
    for (const topo::NodeId node : node_order) {
      std::vector<topo::GpuId> m = members[node];
      std::sort(m.begin(), m.end());
      std::rotate(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(
                                             static_cast<std::size_t>(c) % m.size()),
                  m.end());
      ring.insert(ring.end(), m.begin(), m.end());
    }
    rings.push_back(std::move(ring));
  }
  return rings;
}

Handle Collectives::ring(std::span<const topo::GpuId> ranks, int steps, Bytes size,
                         const RingOptions& options, std::span<const PlanTaskId> after) {
  HOPSIM_ASSERT(ranks.size() >= 2, "a ring needs at least 2 ranks, got {}", ranks.size());
  HOPSIM_ASSERT(options.chunks >= 1 && options.channels >= 1, "{} chunks, {} channels",
                options.chunks, options.channels);
  const PlanTaskId s = start(nccl_.ring_latency(options.protocol), after);
  const auto channels = static_cast<std::int64_t>(options.channels);
  const std::vector<std::vector<topo::GpuId>> rings =
      channel_rings(ranks, cluster_, options.channels);
  Handle done;
  for (std::int64_t c = 0; c < channels; ++c) {
    // Channel c carries its share of the data, the first ones a byte more when it does not
    // divide evenly.
    const std::int64_t share = size.n / channels + (c < size.n % channels ? 1 : 0);
    if (share > 0 && options.streamed) {
      one_streamed_ring(rings[static_cast<std::size_t>(c)], steps, share, options.protocol, s,
                        done);
    } else if (share > 0) {
      one_ring(rings[static_cast<std::size_t>(c)], steps, share, options.chunks,
               options.protocol, s, done);
    }
  }
  if (done.done.empty()) {
    done.done.push_back(s);
  }
  return done;
}

void Collectives::one_ring(std::span<const topo::GpuId> ranks, int steps, std::int64_t bytes,
                           int chunks, Protocol protocol, PlanTaskId start, Handle& done) {
  const auto n = static_cast<std::int64_t>(ranks.size());
  const HopLatency& latency = nccl_.ring_latency(protocol);
  const std::int64_t piece = ceil_div(ceil_div(bytes, n), chunks);
  const auto nr = static_cast<std::size_t>(n);
  const auto nc = static_cast<std::size_t>(chunks);
  std::vector<PlanTaskId> arrived(nr * nc, start);  // data of the previous step, by sender
  std::vector<PlanTaskId> next(nr * nc);
  std::vector<PlanTaskId> link_free(nr, start);  // the previous flow on each rank's link
  for (int step = 0; step < steps; ++step) {
    const std::string label = fmt::format("step {}", step);
    for (std::size_t r = 0; r < nr; ++r) {
      const std::size_t left = (r + nr - 1) % nr;
      for (std::size_t c = 0; c < nc; ++c) {
        // Rank r forwards in this step the piece it received from its left in the last one,
        // once its link has sent the piece before.
        const PlanTaskId inputs[] = {link_free[r], arrived[left * nc + c]};
        const Hop h = hop(ranks[r], ranks[(r + 1) % nr], piece,
                          std::span<const PlanTaskId>(inputs, step > 0 ? 2 : 1), latency, label,
                          nccl_.protocol_efficiency(protocol));
        link_free[r] = h.sent;
        next[r * nc + c] = h.arrived;
      }
    }
    std::swap(arrived, next);
  }
  done.done.insert(done.done.end(), arrived.begin(), arrived.end());
}

void Collectives::one_streamed_ring(std::span<const topo::GpuId> ranks, int steps,
                                    std::int64_t bytes, Protocol protocol, PlanTaskId start,
                                    Handle& done) {
  const auto n = static_cast<std::int64_t>(ranks.size());
  const auto nr = static_cast<std::size_t>(n);
  const HopLatency& latency = nccl_.ring_latency(protocol);
  const std::int64_t piece = ceil_div(bytes, n);
  // The latency of the hop out of each rank, and the sum of `steps` of them ending at each
  // (the hops the data a rank forwards in its last step has passed: its own and the steps - 1
  // before it on the ring), from whole turns and a prefix.
  std::vector<Time> out(nr);
  Time turn;
  for (std::size_t r = 0; r < nr; ++r) {
    const bool same_node = cluster_.node_of(ranks[r]) == cluster_.node_of(ranks[(r + 1) % nr]);
    out[r] = same_node ? latency.nvlink_hop : latency.net_hop;
    turn += out[r];
  }
  const auto whole = static_cast<std::int64_t>(steps) / n;
  const auto rest = static_cast<std::size_t>(static_cast<std::int64_t>(steps) % n);
  const std::string label = fmt::format("{} steps", steps);
  const PlanTaskId first[] = {start};
  // window: out[r] + out[r - 1] + ... over `rest` hops, slid one rank at a time.
  Time window;
  for (std::size_t i = 0; i < rest; ++i) {
    window += out[(nr - i) % nr];
  }
  for (std::size_t r = 0; r < nr; ++r) {
    if (r > 0 && rest > 0) {
      window += out[r];
      window = window - out[(r + nr - rest) % nr];
    }
    done.done.push_back(flow_hop(ranks[r], ranks[(r + 1) % nr], piece * steps, first,
                                 whole * turn + window, label,
                                 nccl_.protocol_efficiency(protocol))
                            .arrived);
  }
}

}  // namespace hopsim::work
