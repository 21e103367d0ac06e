// The layer workloads: the attention layer (CP, attention_layer_job.hpp) and the MoE layer
// (EP: hopsim explain prices it; its replay on the network comes with the EP work).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/collectives/moe_routing.hpp"
#include "workloads/jobs/attention_layer_job.hpp"
#include "workloads/jobs/job_env.hpp"

namespace hopsim::work {

/// The model a layer workload needs, fitted to the mesh's degrees, and the GPU figures its
/// kernels need; false (with problems) when either is missing.
bool check_model_and_gpu(const JobEnv& env, std::string_view kind, Problems& out);

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
