// The CP and EP layer workloads: their specs and checks (hopsim explain prices them; their
// replays on the network come with the CP and EP work).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/collectives/moe_routing.hpp"
#include "workloads/jobs/job_env.hpp"

namespace hopsim::work {

/// One transformer layer's attention under context parallelism.
struct AttentionLayerJob {
  static constexpr std::string_view kKind = "attention_layer";
  static constexpr bool kSimulated = false;

  std::int64_t seq_len = 8192;
  std::int64_t micro_batch = 1;
  bool causal = true;

  /// A model that the parallel degrees split; seq_len in 2*cp equal chunks; GPU figures.
  void check(const JobEnv& env, Problems& out) const;
};

/// One MoE layer under expert parallelism: dispatch, experts, combine.
struct MoeLayerJob {
  static constexpr std::string_view kKind = "moe_layer";
  static constexpr bool kSimulated = false;

  /// Tokens per GPU, top-k, node limit; `experts` is the model's routed experts.
  MoeRouting routing;
  double dispatch_bytes_per_element = 1.0;  ///< FP8 (DeepEP adds 1/32 for scales: 1.03125)
  double combine_bytes_per_element = 2.0;   ///< BF16

  /// A MoE model whose experts split over ep; routing that fits the EP group; GPU figures.
  void check(const JobEnv& env, Problems& out) const;
};

}  // namespace hopsim::work
