// Pass-KV against pass-Q in a prefill with CP, as the simulation has them: each algorithm's
// layer at a miss rate, in its parts, and the miss rate at which the two layers take as long,
// found by bisection over the new tokens at the experiment's context (new plus cached).
#pragma once

#include <cstdint>
#include <optional>

#include "workloads/cp/cp_algorithms.hpp"
#include "workloads/experiment/experiment.hpp"

namespace hopsim::tools {

/// One layer of the experiment's prefill with `algorithm` and `new_tokens` of its context new
/// (the rest cached), simulated without the request's fixed cost; the parts are the critical
/// rank's (the ring's most loaded position) in the forward pass.
struct PrefillParts {
  double layer_s = 0;
  double attention_compute_s = 0;  ///< its ring steps' attention
  double exposed_ring_comm_s = 0;  ///< its compute stream's waits for K/V (pass-KV) or Q blocks
  double output_all_to_all_s = 0;  ///< pass-Q: the outputs' all-to-all after the ring, exposed
};

/// Nullopt when the layer cannot run so (its checks' problems).
std::optional<PrefillParts> prefill_parts(const work::Experiment& exp,
                                          work::CpAlgorithm algorithm, std::int64_t new_tokens);

/// Where pass-KV's simulated layer becomes as fast as pass-Q's.
struct SimulatedCrossover {
  /// New tokens over the context where pass-KV minus pass-Q turns from positive to not
  /// (interpolated between the two grid points around it); 0 when pass-KV is no slower at the
  /// smallest point, 1 when pass-Q is faster at every point.
  double miss_rate = 0;
  std::int64_t grid_tokens = 0;  ///< the new tokens' step: 2 x cp x tp (whole zigzag chunks)
  int simulations = 0;
};

/// For an attention layer's prefill with CP > 1 (nullopt otherwise, or when a point cannot run).
std::optional<SimulatedCrossover> simulated_crossover(const work::Experiment& exp);

}  // namespace hopsim::tools
