// Internal to the training step's plan builders (folded and unfolded): the pieces both use.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "workloads/jobs/collective_job.hpp"
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
/// DualPipe holds each stage on two pipeline ranks: its groups span both (`stages`).
std::vector<std::vector<int>> dense_dp_groups(const Mesh& mesh,
                                              std::span<const std::int64_t> stages);
std::vector<std::vector<int>> expert_dp_groups(const Mesh& mesh,
                                               std::span<const std::int64_t> stages);

/// The optimizer step of pipeline rank `rank`: memory-bound over its shard (FP32 master
/// weights and Adam's moments read and written, the gradient read, BF16 weights written).
Time optimizer_time(const StepShape& s, int rank, double hbm_bytes_per_s);

/// A DP collective's simulated time over a stage: (op, dense bytes, expert bytes).
using DpTime = std::function<Time(CollectiveOp, std::int64_t, std::int64_t)>;

/// The end of a folded step on pipeline rank `rank`'s GPU: the optimizer after its last op
/// and its last gradient bucket, then (ZeRO-1) the parameter all-gather over DP, recorded in
/// `details.param_gather`.
void add_step_end(Plan& plan, StepDetails& details, const TrainingStepJob& job,
                  const StepShape& shape, int rank, PlanTaskId last_op,
                  std::optional<PlanTaskId> last_bucket, double hbm_bytes_per_s,
                  const DpTime& dp_time);

/// What both builders report alike: layout, representatives, head times, tokens, model
/// FLOPs, memory. The simulated parts (layers, gradient sync, folding) are the builder's.
StepDetails base_details(const TrainingStepJob& job, const BuildEnv& b);

/// The folded step under DualPipe, from the simulated layers (pairs included) and gradient
/// syncs; `dp_time` simulates a DP collective (op, dense bytes, expert bytes) over a stage.
std::vector<Case> dualpipe_case(
    const TrainingStepJob& job, const BuildEnv& b, StepDetails details,
    const std::optional<LayerTiming>& dense, const std::optional<LayerTiming>& sparse,
    const std::optional<GradSync>& dense_sync, const std::optional<GradSync>& moe_sync,
    Time vocab_sync, Source source, const DpTime& dp_time);

/// The step with every GPU of the mesh in one plan (fold false).
std::vector<Case> unfolded_cases(const TrainingStepJob& job, const BuildEnv& b);

}  // namespace hopsim::work::step_parts
