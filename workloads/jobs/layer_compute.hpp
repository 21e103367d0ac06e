// The kernels of one layer on one GPU, timed by the compute model (calibration or roofline).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "workloads/compute/compute_model.hpp"
#include "workloads/jobs/layer_jobs.hpp"
#include "workloads/model/model.hpp"

namespace hopsim::work {

/// One pass of a layer: each kernel's name and cost, in execution order.
using KernelCosts = std::vector<std::pair<std::string, ComputeCost>>;

struct LayerCosts {
  KernelCosts fwd;
  KernelCosts bwd;
};

/// Attention layer under TP and CP (2*cp chunks, rank 0's blocks: one causal 2k x 2k block
/// and cp-1 full k x 2k blocks, k = seq_len / (2 cp)); BF16 GEMMs for QKV, output and MLP.
LayerCosts attention_layer_costs(const ModelSpec& m, const ParallelSpec& p,
                                 const AttentionLayerJob& job, const ComputeModel& model);

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

}  // namespace hopsim::work
