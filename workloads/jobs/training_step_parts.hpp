// Internal to the training step's plan builders (folded and unfolded): the pieces both use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/jobs/training_step_job.hpp"

namespace hopsim::work::step_parts {

/// The step's layer settings as a transformer layer of one kind (dense or MoE), one pass,
/// `layers` layers.
TransformerLayerJob one_layer(const TransformerLayerJob& layer, bool moe, Passes passes,
                              std::int64_t layers = 1);

/// Whether the step's model has MoE layers (and the job their settings), and dense ones.
bool has_moe(const TrainingStepJob& job, const ModelSpec& m);
bool has_dense(const TrainingStepJob& job, const ModelSpec& m);
/// Whether layer `index` of the step's model runs as a MoE layer.
bool moe_at(const TrainingStepJob& job, const ModelSpec& m, std::int64_t index);

/// Pipeline stage `stage`'s data-parallel groups: dense parameters' (its ranks by TP
/// coordinate: dp x cp members each) and routed experts' (by EP coordinate: tp x cp x dp / ep
/// members each); groups of one member are left out.
std::vector<std::vector<int>> dense_dp_groups(const Mesh& mesh, std::int64_t stage);
std::vector<std::vector<int>> expert_dp_groups(const Mesh& mesh, std::int64_t stage);

/// Parameters of one layer on one GPU: replicated over DP (dense) and routed experts.
StageParams layer_params_per_gpu(const ModelSpec& m, const ParallelSpec& p, bool moe);

/// The optimizer step of pipeline rank `rank`: memory-bound over its shard (FP32 master
/// weights and Adam's moments read and written, the gradient read, BF16 weights written).
Time optimizer_time(const StepShape& s, int rank, double hbm_bytes_per_s);

/// What both builders report alike: layout, representatives, head times, tokens, model
/// FLOPs, memory. The simulated parts (layers, gradient sync, folding) are the builder's.
StepDetails base_details(const TrainingStepJob& job, const BuildEnv& b);

/// The step with every GPU of the mesh in one plan (fold false).
std::vector<Case> unfolded_cases(const TrainingStepJob& job, const BuildEnv& b);

}  // namespace hopsim::work::step_parts
