// Closed forms and kernel costs of the MoE layer (its builder's kernels, hopsim explain, and
// the EP numbers).
#pragma once

#include <cstdint>

#include "topology/spec.hpp"
#include "workloads/costs/layer_costs.hpp"
#include "workloads/ep/moe_layer_job.hpp"
#include "workloads/mesh/mesh.hpp"

namespace hopsim::work {

/// MoE layer under EP with balanced routing: attention over the GPU's tokens (unless the job
/// leaves it out), the router, FP8 grouped expert GEMMs (gate+up, then down) and the shared
/// experts.
LayerCosts moe_layer_costs(const ModelSpec& m, const ParallelSpec& p, const MoeLayerJob& job,
                           const ComputeModel& model);
/// Its parts: attention (projections and core, when `attention`) and the router over `tokens`,
/// the sequence's last `tokens` after `keys_before` earlier ones (a later micro-batch of the
/// same sequence: its queries also see the earlier keys); one GPU's FP8 grouped expert GEMMs at
/// `tokens_per_expert` rows each over `local_experts` experts (0: routed experts / ep); the shared
/// experts.
LayerCosts moe_attention_costs(const ModelSpec& m, const ParallelSpec& p, std::int64_t tokens,
                               std::int64_t keys_before, bool attention, const ComputeModel& model);
LayerCosts moe_expert_costs(const ModelSpec& m, const ParallelSpec& p,
                            std::int64_t tokens_per_expert, const ComputeModel& model,
                            std::int64_t local_experts = 0);
LayerCosts moe_shared_costs(const ModelSpec& m, std::int64_t tokens, const ComputeModel& model);

/// MoE layer under EP (balanced routing): attention over the GPU's tokens (when the job has
/// it), router, experts.
LayerFlops moe_layer_flops(const ModelSpec& m, const ParallelSpec& p, const MoeLayerJob& job);

struct EpNumbers {
  /// InfiniBand bytes one GPU sends: each token once per destination node, every node remote
  /// (the worst case): tokens x nodes per token x hidden x bytes/element.
  double dispatch_bytes_ib = 0;
  double combine_bytes_ib = 0;
  double fwd_bwd_bytes_ib = 0;     ///< two all-to-alls forward, two backward
  double layer_flops_per_gpu = 0;  ///< 2 x (active params / layers) x tokens
  double compute_s_at_peak = 0;
  double comm_s_at_nic = 0;  ///< dispatch + combine over one NIC
};

/// From the cluster's GPU peak and NIC line rate.
EpNumbers ep_numbers(const ModelSpec& m, const MoeLayerJob& job, const topo::Spec& cluster);

}  // namespace hopsim::work
