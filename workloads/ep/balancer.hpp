// DeepSeek-V3's auxiliary-loss-free balancing: a per-expert routing bias, nudged after every
// training step against the expert's load, simulated over steps.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "topology/cluster.hpp"
#include "workloads/collectives/moe_routing.hpp"

namespace hopsim::work {

struct BiasBalance {
  std::vector<double> bias;            ///< per expert, after the last step
  std::vector<double> max_over_mean;   ///< per step: max / mean of the GPUs' expert rows
};

/// `steps` training steps of `routing` over `ranks`: each step routes a sample of tokens (about
/// 16,384 over the group, new ones each step) with the current bias, then adds `gamma` to the
/// bias of every expert below the mean load and subtracts it from every expert above. The bias
/// is in log-weight units: gamma = 0.05 scales an expert's weight by e^0.05 per step. DeepSeek
/// adds its bias (0.001 per step) to sigmoid affinities, which this model does not have.
BiasBalance balance_bias(std::span<const int> ranks, const topo::Cluster& cluster,
                         MoeRouting routing, std::int64_t steps, double gamma);

}  // namespace hopsim::work
