// Where the fabric puts each NIC: the leaves of a rail-optimized or fat-tree fabric.
#pragma once

#include <cstdint>

#include "topology/spec.hpp"

namespace hopsim::topo {

/// Leaves of the fabric of `spec`. Rail-optimized: nodes form groups of nodes_per_leaf, and NIC
/// k of every node of group q sits on leaf q * gpus_per_node + k. Fat tree: all NICs of node n
/// sit on leaf n / nodes_per_leaf. In 64 bits: check_spec calls it before it bounds the sizes.
std::int64_t leaf_count(const Spec& spec);

/// The leaf GPU `rank`'s NIC sits on, for a spec that passed check_spec.
int leaf_of_nic(const Spec& spec, int rank);

/// Spine switches of the fabric of `spec`: its spines, or none with a single leaf.
int spine_count(const Spec& spec);

}  // namespace hopsim::topo
