// The leaves of the fabric (leaves.hpp).
#include "topology/leaves.hpp"

namespace hopsim::topo {
namespace {

// Nodes that share one leaf (a rail's, on a rail-optimized fabric); 0 or too many: all.
std::int64_t nodes_per_leaf(const Spec& spec) {
  return (spec.nodes_per_leaf <= 0 || spec.nodes_per_leaf > spec.nodes) ? spec.nodes
                                                                        : spec.nodes_per_leaf;
}

}  // namespace

std::int64_t leaf_count(const Spec& spec) {
  const std::int64_t per_leaf = nodes_per_leaf(spec);
  const std::int64_t groups = (spec.nodes + per_leaf - 1) / per_leaf;
  return spec.fabric == FabricKind::RailOptimized ? groups * spec.gpus_per_node : groups;
}

int leaf_of_nic(const Spec& spec, int rank) {
  const auto group = static_cast<int>((rank / spec.gpus_per_node) / nodes_per_leaf(spec));
  return spec.fabric == FabricKind::RailOptimized
             ? group * spec.gpus_per_node + rank % spec.gpus_per_node
             : group;
}

int spine_count(const Spec& spec) {
  return leaf_count(spec) > 1 ? spec.spines : 0;
}

}  // namespace hopsim::topo
