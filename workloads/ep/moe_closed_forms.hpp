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
/// leaves it out), the router, the grouped expert GEMMs (gate+up, then down) and the shared
/// experts, each in its dtype (job.dtypes).
LayerCosts moe_layer_costs(const ModelSpec& m, const ParallelSpec& p, const MoeLayerJob& job,
                           const ComputeModel& model);
/// Its parts: attention (projections and core, when `attention`) and the router over `tokens`,
/// the sequence's last `tokens` after `keys_before` earlier ones (a later micro-batch of the
/// same sequence: its queries also see the earlier keys), the router's GEMM in `router`; one
/// GPU's grouped expert GEMMs in `experts` at `tokens_per_expert` rows each over
/// `local_experts` experts (0: routed experts / ep), FP8 with the rows dispatched in FP8 and
/// the other inputs cast by the workload's fp8_recipe, BF16 without casts; the shared experts
/// in `shared` (FP8: their input cast is the dispatch's quantization, shared with the rows).
LayerCosts moe_attention_costs(const ModelSpec& m, const ParallelSpec& p, std::int64_t tokens,
                               std::int64_t keys_before, bool attention, const ComputeModel& model,
                               Dtype router = Dtype::Bf16);
/// Megatron's alltoall dispatcher's own kernels on each GPU (ep_algorithms.hpp's
/// permutes_locally): `dispatcher_permute` of its tokens x top_k (token, expert) copies into
/// destination order before dispatch, `dispatcher_unpermute` (each copy weighted by its
/// probability and summed per token) after combine; BF16 rows of the hidden size, 4 r h bytes
/// each way (permute_bytes), forward and backward (where the two swap roles).
LayerCosts dispatcher_permute_costs(const ModelSpec& m, std::int64_t tokens, std::int64_t top_k,
                                    const ComputeModel& model);
LayerCosts moe_expert_costs(const ModelSpec& m, const ParallelSpec& p,
                            std::int64_t tokens_per_expert, const ComputeModel& model,
                            std::int64_t local_experts = 0, Dtype experts = Dtype::Fp8);
LayerCosts moe_shared_costs(const ModelSpec& m, std::int64_t tokens, const ComputeModel& model,
                            Dtype shared = Dtype::Fp8);

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
