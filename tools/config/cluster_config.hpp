// Reads a cluster config (configs/clusters/*.json) into the topology Spec and the GPU's figures.
#pragma once

#include <string>

#include "tools/config/node.hpp"
#include "topology/spec.hpp"
#include "workloads/collectives/ep_exchange.hpp"
#include "workloads/collectives/nccl_model.hpp"

namespace hopsim::config {

struct ClusterConfig {
  topo::Spec topology;  ///< with the GPU's figures and the links' peak line rates
  /// NCCL's constants for collectives (optional "nccl" section).
  work::NcclModel nccl;
  /// What the EP libraries' kernels reach: DeepEP's from the optional "deepep" section.
  work::LibraryConstants ep_libraries;
};

/// Parses and checks a whole cluster file (topo::check_spec included). Optional keys keep
/// topo::Spec's defaults; link capacities are the "achievable" figures unless "bandwidth" is
/// "peak". Every key of "sources" must be a JSON pointer to a value of the same file.
/// Throws ConfigError naming the file and JSON pointer of the first bad value.
ClusterConfig parse_cluster(const Node& root);

}  // namespace hopsim::config
