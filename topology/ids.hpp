// The ids that cross from the topology to the workloads built on it.
#pragma once

#include <cstdint>

#include "sim/strong_id.hpp"

namespace hopsim::topo {

/// A GPU's rank in the cluster: node * gpus_per_node + its index in the node.
using GpuId = StrongId<struct GpuIdTag>;
/// A node's index in the cluster.
using NodeId = StrongId<struct NodeIdTag>;
/// A directed link's index in Cluster::link(); the flow solver sees it as a resource id
/// (sim::ResourceId, its value), converted where a plan's flows enter the engine.
using LinkId = StrongId<struct LinkIdTag, std::uint32_t>;

}  // namespace hopsim::topo
