// What a training step's report needs beyond its plan: how it was folded, the simulated layer
// and gradient-sync times it was folded from, and the closed-form memory and FLOPs.
#pragma once

#include <any>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/units.hpp"
#include "workloads/costs/layer_costs.hpp"
#include "workloads/step/step_model.hpp"

namespace hopsim::work {

/// One layer kind (dense or MoE) as simulated on one layer group: its forward and backward
/// time (backward with the recomputed forward under full recompute), and the communication
/// its busiest GPU did not hide, by kind ("tp", "cp", "ep"), forward and backward together.
struct LayerTiming {
  bool moe = false;
  Time forward;
  Time backward;
  /// The backward's weight-gradient part, as a schedule that defers it runs it: the most any
  /// GPU of the layer group spends in its weight-gradient GEMMs (dense and grouped).
  Time weight;
  /// The backward's input-gradient part (recomputation as in `backward`): the backward's probe
  /// without its weight-gradient kernels, every other task as long as it took there
  /// (critical_path.hpp: the communication those kernels hid shows).
  Time backward_input;
  /// DualPipe: this layer's forward overlapped with another micro-batch's backward of it;
  /// forward + backward when nothing is simulated to overlap (dense layers).
  Time pair;
  std::vector<std::pair<std::string, Time>> exposed;
  /// The expert-parallel exchanges' communication left exposed in each pass's probe (its
  /// dispatch and combine phases): what DualPipe hides under the compute of a chunk it is
  /// paired with that runs none (workloads/step/training_step_dualpipe.cpp).
  Time ep_exposed_forward;
  Time ep_exposed_backward;
  /// The busiest GPU's compute and communication (flows in flight), forward and backward.
  Time compute;
  Time comm;
  /// Run again before each backward (in `backward`): the whole forward under full recompute,
  /// the recomputed modules' forward kernels under selective, on the busiest GPU.
  Time recomputed;
  int gpus = 0;  ///< of the layer group it ran on
  /// Compute time by kernel class over the layer group's GPUs, forward and backward.
  KernelTally kernels;
  KernelTally forward_kernels;  ///< the forward's alone
};

/// One layer's gradient synchronization over data parallelism, simulated on one pipeline
/// stage's DP groups at once.
struct GradSync {
  bool moe = false;
  Time time;
  double bytes_per_gpu = 0;
  Time gather;  ///< ZeRO-3: the layer's parameter all-gather (BF16), before each use
};

/// The optimizer's parts, each the most any pipeline rank takes (optimizer_cost).
struct OptimizerParts {
  Time grad_norm;        ///< the local squared norm of the gradients, for clipping
  Time norm_all_reduce;  ///< its all-reduce over DP
  Time adam;             ///< Adam over FP32 states, clipping's scale and the BF16 cast fused
};

/// A schedule that schedule "auto" tried: its step time, or why it could not run.
struct ScheduleTried {
  std::string schedule;  ///< schedule_label's
  double step_s = 0;     ///< simulated (0 when rejected)
  std::string rejected;  ///< the check's first problem (empty when simulated)
};

/// An op of a pipeline rank that partial folding runs as real tasks (its layer group's layers)
/// rather than one compute task per piece: its GPU, pass and first and last task.
struct OpSpan {
  topo::GpuId gpu;
  bool forward = true;
  std::uint32_t first = 0;
  std::uint32_t last = 0;
};

struct StepDetails {
  std::string folding;   ///< in words: what was simulated for what
  int stages = 1;        ///< pipeline ranks (pp)
  int model_stages = 1;  ///< as the schedule cuts the model (stage_layers' entries)
  int chunks = 1;        ///< model chunks per rank
  int group = 0;         ///< interleaved, Meta's variant: micro-batches per group (0: pp's)
  std::int64_t micro_batches = 1;
  std::int64_t gpus = 0;
  std::string schedule;
  /// The share of the step the schedule's closed form gives the bubble, with the stages'
  /// mean measured op times (folded; none where the schedule has no closed form)
  std::optional<double> bubble_closed_form;
  std::string recompute;
  int zero = 1;
  std::vector<std::int64_t> layers_per_stage;  ///< per model stage
  std::vector<std::int64_t> first_layer;       ///< per model stage, its first layer's index
  std::vector<std::int64_t> rank_layers;       ///< per pipeline rank, over its chunks
  std::vector<std::int64_t> rank_moe_layers;   ///< per pipeline rank, those that are MoE
  std::vector<LayerTiming> layers;             ///< per layer kind the model has
  std::vector<GradSync> grad_sync;             ///< per layer kind
  /// The output layer (final norm, head GEMM, loss) on one GPU of the last stage, one
  /// micro-batch (output_layer.hpp), and its passes' times
  LayerCosts head;
  Time head_forward;
  Time head_backward;
  /// Activation offload, per offloaded layer (in forward order): its copy each way over the
  /// host link, and one micro-batch's wait for it: after the next layer's forward (the copy
  /// out runs beside it) and before the layer's own backward (the copy back runs beside the
  /// next layer's backward)
  std::vector<Time> offload_copy;
  std::vector<Time> offload_wait_forward;
  std::vector<Time> offload_wait_backward;
  Time param_gather;   ///< ZeRO-1: the updated parameters' all-gather over DP, per rank max
  Time step_overhead;  ///< the framework's fixed cost at the step's end (job.step_overhead)
  OptimizerParts optimizer;
  /// ZeRO-3, per pipeline rank: the time its ops waited for layer parameter gathers, per step
  /// (in a backward a gather also waits for the gradient reduce-scatters on the same links)
  std::vector<Time> gather_exposed;
  std::vector<topo::GpuId> representatives;  ///< per pipeline rank, the GPU simulated for it
  /// Partial folding under spine links: further pipeline columns simulated beside the
  /// representatives' (each a GPU per pipeline rank), whose activations share the perturbed
  /// links with its own (partial_fold.hpp, pipeline_columns).
  std::vector<std::vector<topo::GpuId>> more_columns;
  /// Partial folding under link perturbations: the ops of the pipeline ranks run as their layer
  /// group's real layers (expanded_ranks.hpp), which the report times by these spans.
  std::vector<OpSpan> op_spans;
  double tokens = 0;       ///< per step
  double model_flops = 0;  ///< per step, model_flops_per_token's convention
  double peak_tflops = 0;  ///< of one GPU at the step's GEMM dtype
  double hbm_bytes = 0;
  std::vector<StageMemory> memory;  ///< per pipeline rank
  /// schedule "auto": every schedule tried, in the order tried (empty otherwise)
  std::vector<ScheduleTried> schedules_tried;
};

/// A case's step data (Case::details), or null.
inline const StepDetails* step_details(const std::any& d) {
  return std::any_cast<StepDetails>(&d);
}

}  // namespace hopsim::work
