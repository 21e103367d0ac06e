// Token routing by a seeded generator whose output is the same on every platform.
#include "workloads/moe_routing.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "sim/assert.hpp"

namespace hopsim::work {
namespace {

// mt19937_64's sequence is fixed by the standard; std distributions are not, so draw by modulo.
std::uint64_t draw(std::mt19937_64& rng, std::uint64_t n) { return rng() % n; }

// Picks `k` distinct values of [0, n) (partial Fisher-Yates over `pool`).
void pick(std::mt19937_64& rng, std::vector<int>& pool, std::size_t k) {
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(draw(rng, pool.size() - i));
    std::swap(pool[i], pool[j]);
  }
}

}  // namespace

TwoTierMatrix route_tokens(std::span<const int> ranks, const topo::Cluster& cluster,
                           const MoeRouting& r) {
  const std::size_t n = ranks.size();
  HOPSIM_ASSERT(r.experts > 0 && static_cast<std::size_t>(r.experts) % n == 0,
                "{} experts over {} ranks", r.experts, n);
  const std::size_t per_gpu = static_cast<std::size_t>(r.experts) / n;
  std::map<int, std::size_t> slot_of_node;
  for (int rank : ranks) {
    slot_of_node.emplace(cluster.node_of(rank), 0);
  }
  std::size_t next = 0;
  for (auto& [node, slot] : slot_of_node) {
    slot = next++;
  }
  const std::size_t nodes = slot_of_node.size();
  std::vector<std::vector<int>> experts_of_slot(nodes);
  for (std::size_t g = 0; g < n; ++g) {
    for (std::size_t e = g * per_gpu; e < (g + 1) * per_gpu; ++e) {
      experts_of_slot[slot_of_node[cluster.node_of(ranks[g])]].push_back(static_cast<int>(e));
    }
  }
  const std::size_t node_limit =
      r.max_nodes_per_token <= 0 ? nodes
                                 : std::min(nodes, static_cast<std::size_t>(r.max_nodes_per_token));
  TwoTierMatrix m;
  m.gpu = ByteMatrix{n, std::vector<std::int64_t>(n * n, 0)};
  m.nodes = nodes;
  m.to_node.assign(n * nodes, 0);
  std::mt19937_64 rng(r.seed);
  std::vector<int> node_pool(nodes);
  std::vector<int> candidates;
  std::vector<char> gpu_hit(n);
  std::vector<char> node_hit(nodes);
  for (std::size_t src = 0; src < n; ++src) {
    for (std::int64_t t = 0; t < r.tokens_per_gpu; ++t) {
      for (std::size_t k = 0; k < nodes; ++k) {
        node_pool[k] = static_cast<int>(k);
      }
      pick(rng, node_pool, node_limit);
      candidates.clear();
      for (std::size_t k = 0; k < node_limit; ++k) {
        const auto& e = experts_of_slot[static_cast<std::size_t>(node_pool[k])];
        candidates.insert(candidates.end(), e.begin(), e.end());
      }
      HOPSIM_ASSERT(candidates.size() >= static_cast<std::size_t>(r.top_k),
                    "top-{} among {} experts", r.top_k, candidates.size());
      pick(rng, candidates, static_cast<std::size_t>(r.top_k));
      std::fill(gpu_hit.begin(), gpu_hit.end(), 0);
      std::fill(node_hit.begin(), node_hit.end(), 0);
      for (std::size_t k = 0; k < static_cast<std::size_t>(r.top_k); ++k) {
        const std::size_t dst = static_cast<std::size_t>(candidates[k]) / per_gpu;
        gpu_hit[dst] = 1;
        node_hit[slot_of_node[cluster.node_of(ranks[dst])]] = 1;
      }
      for (std::size_t dst = 0; dst < n; ++dst) {
        m.gpu.bytes[src * n + dst] += gpu_hit[dst] ? r.token_bytes : 0;
      }
      for (std::size_t k = 0; k < nodes; ++k) {
        m.to_node[src * nodes + k] += node_hit[k] ? r.token_bytes : 0;
      }
    }
  }
  return m;
}

}  // namespace hopsim::work
