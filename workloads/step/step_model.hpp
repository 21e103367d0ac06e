// A training step's closed-form layout: which layers each pipeline stage holds, the parameters
// and memory of each GPU, and the model FLOPs that MFU counts. No simulation here; the
// training_step job (workloads/jobs) times the step and reports these beside it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workloads/mesh/mesh.hpp"
#include "workloads/model/model.hpp"
#include "workloads/model/recompute_modules.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::work {

/// Activation recomputation, as Megatron's --recompute-granularity names it: none; selective
/// (the modules below are run again before the backward instead of keeping what they made);
/// full (keep each layer's input only, run its whole forward again before its backward).
enum class Recompute : std::uint8_t { None, Selective, Full };

/// "none", "selective", "full".
std::string_view recompute_name(Recompute r);

/// Megatron's --recompute-method, which layers full recomputation runs again and how many it
/// rebuilds at once, with recompute_layers (its --recompute-num-layers) N, per model stage
/// (a virtual stage's chunk under interleaving): uniform groups the stage's layers N at a time,
/// keeps each group's input and runs the whole group's forward again before its backward;
/// block keeps only the input of the stage's first N layers, rebuilds those one at a time,
/// and keeps everything the others make (they are not run again).
enum class RecomputeMethod : std::uint8_t { Uniform, Block };

/// "uniform", "block".
std::string_view recompute_method_name(RecomputeMethod m);

/// How a step recomputes, as its report says: "none", "selective (layernorm, mla_up_proj)",
/// "full" (uniform, one layer at a time: Megatron's usual full recomputation), or
/// "full (block, 4 layers)".
struct RecomputeSpec {
  Recompute granularity = Recompute::None;
  std::uint8_t modules = kDefaultRecomputeModules;    ///< under selective
  RecomputeMethod method = RecomputeMethod::Uniform;  ///< under full
  int layers = 1;                                     ///< under full: recompute_layers (above)
};

std::string recompute_label(const RecomputeSpec& r);

/// Whether the layer at position `k` (from 0, in forward order) of a model stage runs (some
/// of) its forward again before its backward: every layer under selective and full uniform
/// recomputation, the first `r.layers` under full block, none without recomputation.
bool layer_recomputed(const RecomputeSpec& r, std::int64_t k);
/// Whether full recomputation rebuilds that layer: it keeps its input only and runs its whole
/// forward again (layer_recomputed under full recomputation).
bool full_rebuilds(const RecomputeSpec& r, std::int64_t k);

/// Elements one layer saves for its backward per token before tp and cp split them
/// (step_model.cpp: which tensors), without those `modules` (selective) recompute: those only
/// GEMMs and SwiGLU read back (the norms' outputs, MLA's latents, a dense MLP's and each
/// expert's input, gate, up and SwiGLU outputs), which FP8 training keeps in FP8, and the rest
/// (the norms' inputs, Q, K, V and the attention output), which stay BF16.
struct SavedElements {
  double gemm_inputs = 0;
  double other = 0;

  double total() const { return gemm_inputs + other; }
};

SavedElements layer_saved(const ModelSpec& m, bool moe, std::uint8_t modules);
/// layer_saved's total.
double layer_saved_elements(const ModelSpec& m, bool moe, std::uint8_t modules);

/// Layers of each of `stages` model stages (layers >= stages >= 1): as even as possible, the
/// extra layers on the middle stages, so that the first and last (which hold the embedding and
/// the head) get fewer. Llama 3 405B's 126 layers over 16 stages: 7, then 14 of 8, then 7.
std::vector<std::int64_t> layers_per_stage(std::int64_t layers, int stages);

/// The model index of each stage's first layer: layers_per_stage's running sum from 0.
std::vector<std::int64_t> first_layers(const std::vector<std::int64_t>& layers_per_stage);

/// What a step's memory and FLOPs depend on.
struct StepShape {
  const ModelSpec* model = nullptr;
  ParallelSpec parallel;
  std::int64_t seq_len = 0;
  std::int64_t micro_batch = 1;
  std::int64_t micro_batches = 1;  ///< per pipeline, per step
  const ScheduleRow* schedule = &default_schedule();
  int chunks = 1;  ///< model chunks (virtual stages) per pipeline rank
  int group = 0;   ///< interleaved: micro-batches per group (0: pp, Megatron's)
  /// 0: every optimizer state on every DP rank; 1: optimizer states sharded over DP;
  /// 3: parameters and gradients sharded too, gathered layer by layer (param_prefetch.hpp)
  int zero = 1;
  RecomputeSpec recompute;
  /// Activation offload: the first this many layers of the (single) stage keep their saved
  /// activations in host memory, one layer's at a time on the GPU while it is copied
  int offload_layers = 0;
  /// Bytes per saved element that only GEMMs and SwiGLU read back (SavedElements): 2 (BF16)
  /// or 1 (FP8, as DeepSeek-V3 caches them)
  double gemm_input_bytes = 2;
  double grad_bytes = 2;  ///< per parameter: the gradient buffer and its reduction (bf16)
  /// Per parameter, each of Adam's two moments: 4 (FP32) or 2 (BF16, DeepSeek-V3's); the
  /// master weight stays FP32
  double moment_bytes = 4;

  /// Optimizer state bytes per parameter: the FP32 master weight and Adam's two moments.
  double optimizer_bytes() const { return 4 + 2 * moment_bytes; }

  /// Whether attention's projections, a dense MLP's GEMMs, the routed experts' and the shared
  /// experts' GEMMs run in FP8: those weights keep an FP8 copy and its transpose
  bool fp8_attention = false;
  bool fp8_mlp = false;
  bool fp8_experts = true;
  bool fp8_shared = true;
  /// Bytes per parameter of those low-precision copies (the recipe's, fp8_recipe_row)
  double fp8_copy_bytes = 2;
  double context_bytes = 0;       ///< the CUDA context, per GPU
  double communicator_bytes = 0;  ///< per NCCL communicator a GPU uses
  /// Layers of each model stage as the workload sets them; empty: the even split
  std::vector<std::int64_t> stage_layers;
};

/// The shape its schedule is laid out over.
PipeShape pipe_shape(const StepShape& s);
/// Model stages: the schedule's (1F1B p, interleaved p x chunks, DualPipe p, each held by two
/// ranks, DualPipeV 2p).
int model_stages(const StepShape& s);
/// The step's split: its stage_layers where set, else layers_per_stage over the model's
/// layers and MTP blocks (trained_layers).
std::vector<std::int64_t> stage_split(const StepShape& s);
/// The model stages pipeline rank `rank` holds, as its schedule places them (interleaved:
/// chunk c's c x p + rank; DualPipe: rank and p - 1 - rank, one per direction).
std::vector<int> rank_stages(const StepShape& s, int rank);
/// The pipeline ranks that share a stage with rank `rank` (itself first, then in rank order):
/// its gradients' DP groups span them all (DualPipe: ranks r and p - 1 - r).
std::vector<int> sharing_ranks(const StepShape& s, int rank);

/// Parameters one GPU holds of one model stage: those replicated over the dp x cp ranks of its
/// stage (attention, norms, dense MLPs, routers, shared experts, embedding, head; split over
/// tp) and routed experts (split over ep, replicated over the tp x cp x dp / ep expert-DP
/// ranks).
struct StageParams {
  double dense = 0;
  double expert = 0;
};

/// Per model stage (model_stages of them, layers_per_stage's split).
std::vector<StageParams> stage_params(const StepShape& s);

/// Parameters of one layer on one GPU: those replicated over DP (split over tp) and its
/// routed experts (split over ep).
StageParams layer_params_per_gpu(const ModelSpec& m, const ParallelSpec& p, bool moe);

/// The part of stage `stage`'s dense parameters (per GPU) that is the input embedding, the
/// head and the final norm. ZeRO-3 keeps these whole on every DP rank (reduced once per step
/// and gathered after the optimizer, as under ZeRO-1) and shards only the layers.
double vocab_params(const StepShape& s, int stage);

/// The DP shard of each parameter kind: dense parameters over dp x cp ranks, routed experts
/// over the tp x cp x dp / ep expert-DP ranks; 1 under ZeRO-0.
StageParams dp_shards(const StepShape& s);

/// Whether layer `index` (from 0) of the model is a MoE layer.
bool is_moe_layer(const ModelSpec& m, std::int64_t index);

/// Bytes one GPU holds, by what for.
struct StageMemory {
  double params = 0;       ///< BF16 weights (ZeRO-3: the shard and two gathered layers)
  double grads = 0;        ///< the gradient buffer (grad_bytes per parameter; ZeRO-3: the shard
                           ///< and one layer's full gradient before its reduce-scatter)
  double optimizer = 0;    ///< FP32 master weights, Adam's two moments (12 B per parameter;
                           ///< 8 with BF16 moments)
  double activations = 0;  ///< saved for backward, at the schedule's most micro-batches in flight
                           ///< (DualPipe: freed by a backward's input part)
  double buffers = 0;      ///< MoE dispatch and combine receive buffers
  /// Low-precision copies of the weights FP8 (or NVFP4) GEMMs read, each with its transpose
  /// (the forward reads one, the input gradient the other), at the recipe's bytes with their
  /// scales, cast once a step and kept (ZeRO-3: the gathered layers')
  double fp8_weights = 0;
  double reserve = 0;  ///< the CUDA context and the NCCL communicators' buffers

  double total() const {
    return params + grads + optimizer + activations + buffers + fp8_weights + reserve;
  }
};

/// The NCCL communicators one GPU of the step uses (those of more than one GPU): tensor,
/// context, data (dp x cp: the gradients'), pipeline (its sends and receives), and in a MoE
/// model expert and expert-data parallelism.
int communicators(const StepShape& s);

/// Bytes one layer of step `s` keeps for its backward per token, before tp and cp split them:
/// layer_saved's elements at BF16, those only GEMMs and SwiGLU read at s.gemm_input_bytes,
/// without what selective recomputation runs again (full recomputation is not counted here).
double layer_bytes_per_token(const StepShape& s, bool moe);

/// Saved activations of one layer for one micro-batch on one GPU (what activation offload
/// copies to the host and back).
double layer_activation_bytes(const StepShape& s, bool moe);

/// Per pipeline rank: the memory of its GPU at the step's peak.
std::vector<StageMemory> stage_memory(const StepShape& s);

/// Model FLOPs per token of one training step (forward and backward), the convention of the
/// Llama 3 and DeepSeek-V3 reports: 6 x the parameters a token's GEMMs use (active parameters
/// without the input embedding, a lookup) + the attention scores' 12 L h per attended
/// (query, key) pair, over a sequence of seq_len tokens attending `attended_pairs` pairs
/// (full: s^2, 12 L h s per token; causal: s(s + 1)/2; documents: each its own causal
/// triangle). Recomputation is not counted (hardware FLOPs, not model FLOPs).
double model_flops_per_token(const ModelSpec& m, std::int64_t seq_len, double attended_pairs);

}  // namespace hopsim::work
