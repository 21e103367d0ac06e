// Internal to the training step's plan builders (folded and unfolded): the pieces both use.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "workloads/jobs/collective_job.hpp"
#include "workloads/plan/probe.hpp"
#include "workloads/step/step_details.hpp"
#include "workloads/step/training_step_job.hpp"

namespace hopsim::work::step_parts {

/// The step's layer settings as a transformer layer of one kind (dense or MoE), one pass,
/// `layers` layers.
TransformerLayerJob one_layer(const TransformerLayerJob& layer, bool moe, Passes passes,
                              std::int64_t layers = 1);

/// The MoE layer's overlapped forward-backward pair on `b`'s mesh, as the folded step's probe
/// and the unfolded step run it: the layer's own attention (the kernels and TP collectives its
/// forward and backward probes run) around the MoE part's pair, each exchange under the other
/// micro-batch's compute. Recomputation runs before the pair, not inside it.
Plan moe_pair_plan(const TrainingStepJob& job, const BuildEnv& b);

/// Whether the step's model has MoE layers (and the job their settings), and dense ones.
bool has_moe(const TrainingStepJob& job, const ModelSpec& m);
bool has_dense(const TrainingStepJob& job, const ModelSpec& m);
/// Whether layer `index` of the step's model runs as a MoE layer.
bool moe_at(const TrainingStepJob& job, const ModelSpec& m, std::int64_t index);

/// The backward of the layer at position `k` (from 0, in forward order) of a model stage,
/// timed `t`: with its forward run again only where the step recomputes that layer (full
/// block recomputation runs only the stage's first layers again; layer_recomputed).
Time backward_at(const TrainingStepJob& job, const LayerTiming& t, std::int64_t k);
/// DualPipe's overlapped pair with the backward half of position `k`, as backward_at.
Time pair_at(const TrainingStepJob& job, const LayerTiming& t, std::int64_t k);
/// DualPipe's pair of a forward (of `f`) and a backward (`backward`, of `b`) not simulated
/// together (a dense layer beside a MoE layer): one after the other, less the expert
/// exchanges each left exposed in its own probe as far as the other's compute hides them
/// (DualPipe runs one chunk's communication under the other's compute).
Time mixed_pair(const LayerTiming& f, Time backward, const LayerTiming& b);

/// Pipeline stage `stage`'s data-parallel groups: dense parameters' (its ranks by TP
/// coordinate: dp x cp members each) and routed experts' (by EP coordinate: tp x cp x dp / ep
/// members each); groups of one member are left out.
/// DualPipe holds each stage on two pipeline ranks: its groups span both (`stages`).
std::vector<std::vector<topo::GpuId>> dense_dp_groups(const Mesh& mesh,
                                                      std::span<const std::int64_t> stages);
std::vector<std::vector<topo::GpuId>> expert_dp_groups(const Mesh& mesh,
                                                       std::span<const std::int64_t> stages);

/// The optimizer step of pipeline rank `rank` over its shard, as Megatron's distributed
/// optimizer runs it, each part memory-bound at `bytes_per_s` (HBM at the elementwise kernels'
/// efficiency): the gradient's local squared norm for clipping (the gradient read), the
/// norms' all-reduce over DP (norm_key, simulated), then Adam with clipping's scale and the
/// master-weight cast fused (FP32 master weights and both moments read and written, the
/// gradient read, the BF16 weights written).
struct OptimizerCost {
  Time grad_norm;
  Time adam;
};

OptimizerCost optimizer_cost(const StepShape& s, int rank, double bytes_per_s);

/// A data-parallel collective over one pipeline stage's DP groups (dense bytes) and expert-DP
/// groups (expert bytes) at once; the folded step measures each one it uses as a probe.
struct DpKey {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::int64_t dense = 0;
  std::int64_t expert = 0;
  auto operator<=>(const DpKey&) const = default;

  bool empty() const { return dense <= 0 && expert <= 0; }
};

/// What a pipeline rank that perturbations touch measures differently from the healthy step
/// (partial folding): the slowest of its layer groups per kind (and which group that was), the
/// DP collectives over its own DP groups, its slowest GPU's speed per kernel class.
struct RankMeasurements {
  std::optional<LayerTiming> dense;
  std::optional<LayerTiming> sparse;
  std::map<DpKey, Time> dp;
  KernelSpeeds speed = speeds_at(1.0);
  std::array<std::string, 2> paced_by;  ///< dense, MoE: the group, "GPUs 2, 3"; empty: healthy
  /// Per touched layer group of the rank (by its probes' suffix): its dense and MoE layers'
  /// forward plus backward, as measured.
  std::map<std::string, std::array<Time, 2>> group_time;
};

/// What the folded step is assembled from: each layer kind's measured timing, every DP
/// collective it uses, and the layers' dominant compute source. Built from probes
/// (measure_step) or, in tests, by hand.
struct StepMeasurements {
  std::optional<LayerTiming> dense;
  std::optional<LayerTiming> sparse;
  std::map<DpKey, Time> dp;
  Source source = Source::Exact;
  /// Compute by kernel class: each kind's layer group's, times its layers in the model.
  KernelTally kernels;
  /// Per kernel class, the slowest speed of the pipeline rank's GPUs (at_rank's view; 1
  /// healthy): its output layer's and optimizer's.
  KernelSpeeds speed = speeds_at(1.0);
  /// Pipeline ranks that perturbations touch, by rank.
  std::map<int, RankMeasurements> ranks;
  /// An empty key takes no time; any other must have been measured (assert).
  Time dp_time(const DpKey& key) const;
  /// What pipeline rank `rank` runs with: these measurements, with its own where it has them.
  StepMeasurements at_rank(int rank) const;
};

/// The gradient reduction (reduce-scatter under ZeRO >= 1, all-reduce under ZeRO-0) of one
/// layer of each kind, and of the embedding or head; ZeRO-3's per-layer parameter gather.
DpKey layer_sync_key(const TrainingStepJob& job, const ModelSpec& m, const ParallelSpec& p,
                     bool moe);
DpKey layer_gather_key(const ModelSpec& m, const ParallelSpec& p, bool moe);
DpKey vocab_sync_key(const TrainingStepJob& job, const ModelSpec& m, const ParallelSpec& p);
/// ZeRO >= 1: pipeline rank `rank`'s parameter all-gather after the optimizer (ZeRO-3: only
/// the vocabulary's, kept whole).
DpKey param_gather_key(const TrainingStepJob& job, const StepShape& shape, int rank);
/// Every DP collective the folded step uses, each once.
std::vector<DpKey> dp_requests(const TrainingStepJob& job, const BuildEnv& b);

/// One layer of one kind and pass on a layer group's ranks 0 to n-1: the plan its probe runs.
Plan layer_plan(const TrainingStepJob& job, const BuildEnv& b, bool moe, Passes passes);
/// A DP collective over pipeline rank `stage`'s DP groups (under DualPipe, with those of rank
/// pp - 1 - stage, which holds the same two stages); empty when no group has two members.
Plan dp_plan(const TrainingStepJob& job, const BuildEnv& b, const DpKey& key,
             std::int64_t stage = 0);

/// Probe names, shared by the declaration and the lookup.
std::string layer_probe_name(bool moe, Passes passes);
std::string dp_probe_name(const DpKey& key);
inline constexpr std::string_view kPairProbe = "moe layer dualpipe pair";
/// Whether the step measures a DualPipe pair of its MoE layer (no TP, no CP).
bool measures_pair(const TrainingStepJob& job, const ParallelSpec& p);

/// Partial folding's probes (partial_fold.hpp), after the healthy ones in `out`: each touched
/// layer group's layers, and the DP collectives of the stages whose links are perturbed.
void add_touched_probes(const TrainingStepJob& job, const BuildEnv& b, std::vector<Probe>& out);
/// " @ stage 3": what a stage's own DP probe adds to the healthy one's name.
std::string stage_suffix(int stage);

/// The folded step's measurements read from its probes.
StepMeasurements measure_step(const TrainingStepJob& job, const BuildEnv& b, const Measured& m);

/// What selective recomputation adds before one layer's backward, per GPU: the forward kernels
/// of its recomputed modules (`forward`: the layer's forward kernels over `gpus` GPUs; the
/// up-projections' and the MLP's share of the forward GEMMs by parameters; moe the router's and
/// shared experts' share, shared_experts the shared experts' and their rows' share of the
/// SwiGLUs), and with moe the dispatch and combine again, `ep_forward` (the forward's exposed
/// exchanges; 0 where the caller has none). 0 unless selective.
Time selective_recompute_time(const TrainingStepJob& job, const ModelSpec& m, bool moe,
                              const KernelTally& forward, int gpus, Time ep_forward = Time{});

/// The bytes the folded step moves over the whole cluster: the probes' times the step runs
/// what each measured (a touched group's and stage's own where a link perturbation touches
/// them), and the pipeline's activations in `plan` once, every other column of the mesh as
/// the healthy cluster routes them.
CaseTraffic folded_traffic(const TrainingStepJob& job, const BuildEnv& b, const Measured& m,
                           const Plan& plan);

/// The folded step assembled from measurements: one case.
std::vector<Case> fold_step(const TrainingStepJob& job, const BuildEnv& b,
                            const StepMeasurements& m);

/// A data-parallel collective of measured time `t` on `gpu`'s "dp" stream (added when the plan
/// has none): one at a time in the order they are added, counted as communication.
PlanTaskId add_dp_hold(Plan& plan, topo::GpuId gpu, Time t, std::uint32_t phase,
                       std::string_view label);

/// The all-reduce of gradient clipping's squared norm (one FP32 value) over DP.
DpKey norm_key();

/// The framework's fixed cost of a step (job.step_overhead) on `gpu`, a delay after `after`
/// (the GPU's optimizer or parameter gather), recorded in `details.step_overhead`; nothing
/// when it is 0.
void add_step_overhead(Plan& plan, StepDetails& details, const TrainingStepJob& job,
                       topo::GpuId gpu, std::span<const PlanTaskId> after);

/// What both builders report alike: layout, representatives, head times, tokens, model
/// FLOPs, memory. The simulated parts (layers, gradient sync, folding) are the builder's.
StepDetails base_details(const TrainingStepJob& job, const BuildEnv& b);

/// The step with every GPU of the mesh in one plan (fold false).
std::vector<Case> unfolded_cases(const TrainingStepJob& job, const BuildEnv& b);

}  // namespace hopsim::work::step_parts
