// Tree all-reduce as NCCL runs it across nodes: per channel a double binary tree over the nodes
// (two trees, each carrying half of the channel's data, one the mirror of the other so that a
// node is a leaf in one where it is inside the other), a chain through the GPUs of each node
// from its leader, reduce up then broadcast down, pipelined in pieces.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "sim/int_math.hpp"
#include "workloads/collectives/collectives.hpp"

namespace hopsim::work {
namespace {

// One task that ends when every input has: the input itself when there is one, else a
// zero-length delay on `gpu` after all of them.
PlanTaskId join(Plan& plan, topo::GpuId gpu, const std::vector<PlanTaskId>& inputs,
                std::uint32_t phase) {
  if (inputs.size() == 1) {
    return inputs.front();
  }
  const PlanTaskId id = plan.add_delay(gpu, Time{}, phase);
  for (PlanTaskId i : inputs) {
    plan.add_dependency(i, id);
  }
  return id;
}

// The GPUs of each node (nodes in order of first appearance), by local index.
std::vector<std::vector<topo::GpuId>> nodes_of(std::span<const topo::GpuId> ranks,
                                               const topo::Cluster& cluster) {
  std::vector<topo::NodeId> order;
  std::map<topo::NodeId, std::vector<topo::GpuId>> members;
  for (const topo::GpuId r : ranks) {
    auto [it, fresh] = members.try_emplace(cluster.node_of(r));
    if (fresh) {
      order.push_back(it->first);
    }
    it->second.push_back(r);
  }
  std::vector<std::vector<topo::GpuId>> out;
  for (const topo::NodeId node : order) {
    std::vector<topo::GpuId> m = members[node];
    std::sort(m.begin(), m.end());
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

Handle Collectives::all_reduce_tree(std::span<const topo::GpuId> ranks, Bytes size,
                                    const RingOptions& options, std::span<const PlanTaskId> after) {
  HOPSIM_ASSERT(ranks.size() >= 2, "a tree needs at least 2 ranks, got {}", ranks.size());
  const HopLatency& latency = nccl_.tree_latency(options.protocol);
  const PlanTaskId s = start(latency, after);
  const std::vector<std::vector<topo::GpuId>> nodes = nodes_of(ranks, cluster_);
  const auto channels = static_cast<std::int64_t>(options.channels);
  Handle done;
  for (std::int64_t c = 0; c < channels; ++c) {
    // Channel c's leader in every node is its (c mod m)-th GPU, so channels use distinct NICs.
    std::vector<std::vector<topo::GpuId>> chains;
    for (const std::vector<topo::GpuId>& m : nodes) {
      std::vector<topo::GpuId> chain = m;
      std::rotate(chain.begin(),
                  chain.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(c) %
                                                              m.size()),
                  chain.end());
      chains.push_back(std::move(chain));
    }
    const std::int64_t channel_bytes = size.n / channels + (c < size.n % channels ? 1 : 0);
    for (int tree = 0; tree < 2; ++tree) {
      const std::int64_t tree_bytes = channel_bytes / 2 + (tree == 0 ? channel_bytes % 2 : 0);
      if (tree_bytes > 0) {
        one_tree(chains, tree == 1, tree_bytes, options, s, done);
      }
    }
  }
  if (done.done.empty()) {
    done.done.push_back(s);
  }
  return done;
}

void Collectives::one_tree(const std::vector<std::vector<topo::GpuId>>& chains, bool mirrored,
                           std::int64_t bytes, const RingOptions& options, PlanTaskId start,
                           Handle& done) {
  const HopLatency& latency = nccl_.tree_latency(options.protocol);
  const std::size_t n = chains.size();
  // Heap-shaped binary tree over node positions; the mirror numbers the nodes backwards.
  const auto node_at = [&](std::size_t pos) { return mirrored ? n - 1 - pos : pos; };
  const std::int64_t piece = ceil_div(bytes, options.chunks);
  // Per GPU and phase: the previous flow it sent on that connection (reduce and broadcast run
  // on connections of their own, as NCCL's tree does, sharing the links' bandwidth).
  std::map<std::pair<topo::GpuId, bool>, PlanTaskId> link_free;
  const auto send = [&](topo::GpuId from, topo::GpuId to, std::vector<PlanTaskId> inputs,
                        const char* label) {
    const bool broadcast = label[5] == 'b';  // "tree broadcast"
    auto [it, fresh] = link_free.try_emplace(std::pair{from, broadcast}, start);
    inputs.push_back(it->second);
    const Hop h = hop(from, to, piece, inputs, latency, label,
                      nccl_.protocol_efficiency(options.protocol));
    it->second = h.sent;
    return h.arrived;
  };
  for (int p = 0; p < options.chunks; ++p) {
    // Reduce: every chain up to its leader, then the leaders up the tree, children first.
    std::vector<PlanTaskId> up(n, start);  // piece p fully reduced at the node's leader
    for (std::size_t pos = n; pos-- > 0;) {
      const std::vector<topo::GpuId>& chain = chains[node_at(pos)];
      PlanTaskId arrived = start;
      for (std::size_t k = chain.size() - 1; k > 0; --k) {
        arrived = send(chain[k], chain[k - 1], {arrived}, "tree reduce");
      }
      std::vector<PlanTaskId> inputs{arrived};
      for (std::size_t child : {2 * pos + 1, 2 * pos + 2}) {
        if (child < n) {
          inputs.push_back(send(chains[node_at(child)].front(), chain.front(), {up[child]},
                                "tree reduce"));
        }
      }
      up[pos] = join(plan_, chain.front(), inputs, phase_);
    }
    // Broadcast: from the root down the tree, and down every chain.
    std::vector<PlanTaskId> down(n, up[0]);
    for (std::size_t pos = 0; pos < n; ++pos) {
      const std::vector<topo::GpuId>& chain = chains[node_at(pos)];
      for (std::size_t child : {2 * pos + 1, 2 * pos + 2}) {
        if (child < n) {
          down[child] = send(chain.front(), chains[node_at(child)].front(), {down[pos]},
                             "tree broadcast");
        }
      }
      PlanTaskId arrived = down[pos];
      for (std::size_t k = 1; k < chain.size(); ++k) {
        arrived = send(chain[k - 1], chain[k], {arrived}, "tree broadcast");
      }
      done.done.push_back(arrived);
    }
  }
}

Handle Collectives::all_reduce_nvls(std::span<const topo::GpuId> ranks, Bytes size,
                                    std::span<const PlanTaskId> after) {
  // The NVSwitch reduces and multicasts: each GPU sends its S bytes up once and receives the
  // reduced S once. A flow from each GPU to the next carries exactly that load on every up- and
  // down-link; NVLS reaches `nvls_efficiency` of the links' bandwidth, so it moves S / eff.
  const HopLatency latency{Time{}, nccl_.nvls.nvlink_hop, nccl_.nvls.net_hop};
  const PlanTaskId first[] = {start(latency, after)};
  Handle done;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    done.done.push_back(
        hop(ranks[i], ranks[(i + 1) % ranks.size()], size.n, first, latency, "nvls",
            nccl_.nvls_efficiency)
            .arrived);
  }
  return done;
}

}  // namespace hopsim::work
