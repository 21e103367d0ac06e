// Routings made once per run: the plans of one run (a training step's layer probes, a MoE
// layer's repeat probes and its case) route the same tokens of the same EP groups again and
// again, and routing a DeepSeek-V3 layer group takes as long as simulating it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "topology/cluster.hpp"
#include "workloads/ep/moe_routing.hpp"

namespace hopsim::work {

/// One EP group's routing in tokens: route_tokens' matrix at 1 byte a token, and its loads.
struct GroupTokens {
  TwoTierMatrix tokens;
  RoutingLoad load;
};

/// The routings of one run, by their inputs, shared by every plan that asks again. Routing is
/// a pure function of the routing spec and of each rank's node (all that route_tokens reads of
/// the cluster), so a routing made once serves every later request with equal inputs, byte
/// for byte. A run owns one (BuildEnv::routings) while it builds plans; its calls may come from
/// several threads.
class RoutingCache {
 public:
  /// route_tokens(ranks, cluster, r, Bytes{1}, &load): made on the first call with these
  /// inputs, shared after.
  std::shared_ptr<const GroupTokens> route(std::span<const topo::GpuId> ranks,
                                           const topo::Cluster& cluster, const MoeRouting& r);

  /// Forgets every routing (plans that share one keep it): a run clears its cache once a batch
  /// of plans is built, so that no routing takes memory while they are simulated.
  void clear();

 private:
  struct Entry {
    std::vector<topo::NodeId> nodes;  ///< per rank
    MoeRouting routing;
    std::shared_ptr<const GroupTokens> routed;
  };

  std::mutex mutex_;
  std::multimap<std::uint64_t, Entry> by_seed_;
};

/// `cache`'s routing of the group, or one made here where `cache` is null.
std::shared_ptr<const GroupTokens> route_group(RoutingCache* cache,
                                               std::span<const topo::GpuId> ranks,
                                               const topo::Cluster& cluster, const MoeRouting& r);

}  // namespace hopsim::work
