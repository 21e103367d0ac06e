// Routings made once per run (routing_cache.hpp).
#include "workloads/ep/routing_cache.hpp"

#include <utility>

namespace hopsim::work {
namespace {

std::shared_ptr<const GroupTokens> routed(std::span<const topo::GpuId> ranks,
                                          const topo::Cluster& cluster, const MoeRouting& r) {
  auto out = std::make_shared<GroupTokens>();
  out->tokens = route_tokens(ranks, cluster, r, Bytes{1}, &out->load);
  return out;
}

}  // namespace

std::shared_ptr<const GroupTokens> RoutingCache::route(std::span<const topo::GpuId> ranks,
                                                       const topo::Cluster& cluster,
                                                       const MoeRouting& r) {
  std::vector<topo::NodeId> nodes;
  nodes.reserve(ranks.size());
  for (const topo::GpuId g : ranks) {
    nodes.push_back(cluster.node_of(g));
  }
  const auto find = [&]() -> std::shared_ptr<const GroupTokens> {
    const auto [first, last] = by_seed_.equal_range(r.seed);
    for (auto it = first; it != last; ++it) {
      if (it->second.nodes == nodes && it->second.routing == r) {
        return it->second.routed;
      }
    }
    return nullptr;
  };
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (std::shared_ptr<const GroupTokens> have = find()) {
      return have;
    }
  }
  // Routed unlocked, so that other groups' requests need not wait; a request for the same
  // inputs meanwhile routes them too, and the first one stored is kept.
  std::shared_ptr<const GroupTokens> made = routed(ranks, cluster, r);
  const std::lock_guard<std::mutex> lock(mutex_);
  if (std::shared_ptr<const GroupTokens> have = find()) {
    return have;
  }
  by_seed_.emplace(r.seed, Entry{std::move(nodes), r, made});
  return made;
}

void RoutingCache::clear() {
  const std::lock_guard<std::mutex> lock(mutex_);
  by_seed_.clear();
}

std::shared_ptr<const GroupTokens> route_group(RoutingCache* cache,
                                               std::span<const topo::GpuId> ranks,
                                               const topo::Cluster& cluster, const MoeRouting& r) {
  return cache != nullptr ? cache->route(ranks, cluster, r) : routed(ranks, cluster, r);
}

}  // namespace hopsim::work
