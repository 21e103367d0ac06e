// Reads a cluster config (configs/clusters/*.json) into the topology Spec and the GPU's figures.
#pragma once

#include <string>

#include "tools/config/node.hpp"
#include "topology/spec.hpp"
#include "workloads/collectives/collectives.hpp"

namespace hopsim::config {

/// Datasheet figures of one GPU: dense peaks, HBM capacity (10^9 B) and bandwidth (10^9 B/s).
struct GpuSpec {
  std::string name;
  double peak_bf16_tflops = 0;
  double peak_fp8_tflops = 0;
  double hbm_GB = 0;    // NOLINT(readability-identifier-naming): the config key, unit included
  double hbm_GBps = 0;  // NOLINT(readability-identifier-naming)
};

struct ClusterConfig {
  topo::Spec topology;
  GpuSpec gpu;
  /// Datasheet line rates, whichever figure the links use (closed forms quote these).
  Bandwidth nvlink_peak;
  Bandwidth nic_peak;
  /// NCCL's latency constants for collectives (optional "nccl" section).
  work::CollectiveLatency nccl;
};

/// Parses and checks a whole cluster file. Optional keys keep topo::Spec's defaults; link
/// capacities are the "achievable" figures unless "bandwidth" is "peak". Every key of
/// "sources" must be a JSON pointer to a value of the same file.
/// Throws ConfigError naming the file and JSON pointer of the first bad value.
ClusterConfig parse_cluster(const Node& root);

}  // namespace hopsim::config
