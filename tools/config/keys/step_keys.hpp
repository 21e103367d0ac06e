// The keys of a `training_step` workload: a transformer layer's (transformer_keys.hpp) and the
// step's own: the batch, the pipeline schedule, ZeRO, recomputation, dtypes, the fixed cost.
#pragma once

#include <array>
#include <span>
#include <string>
#include <cstdint>
#include <string_view>

#include "tools/config/key.hpp"
#include "tools/config/keys/attention_keys.hpp"
#include "tools/config/keys/moe_keys.hpp"
#include "tools/config/keys/transformer_keys.hpp"
#include "workloads/step/training_step_job.hpp"

namespace hopsim::config::keys::step {

inline constexpr std::array kKindName{work::TrainingStepJob::kKind};
/// work::PipeSchedule's names in its order, then "auto" (every schedule tried).
/// The schedule table's names (workloads/step/schedule_table.hpp), then "auto"; and the key's
/// doc line from the rows' notes (step_config.cpp).
std::span<const std::string_view> schedule_choices();
std::string schedule_doc();
// In work::Recompute's and work::RecomputeMethod's order.
inline constexpr std::array<std::string_view, 3> kRecomputeNames{"none", "selective", "full"};
inline constexpr std::array<std::string_view, 2> kRecomputeMethodNames{"uniform", "block"};
/// Gradients' and Adam's moments' dtypes: 2 or 4 bytes.
inline constexpr std::array<std::string_view, 2> kWideDtypeNames{"bf16", "fp32"};
/// Named as work::cross_entropy_kernel_named knows them.
inline constexpr std::array<std::string_view, 3> kCrossEntropyNames{"unfused", "fused", "online"};
inline constexpr std::int64_t kMaxLayers = 100'000;

inline constexpr ChoiceKey kKind{
    .name = "kind",
    .choices = kKindName,
    .fallback = kRequired,
    .doc =
        "one training step of the whole model: every layer forward and backward over the "
        "micro-batches of a global batch, the pipeline schedule, gradient sync, optimizer"};

inline constexpr IntegerKey kGlobalBatch{
    .name = "global_batch",
    .lo = 1,
    .hi = attention::kMaxTokens,
    .fallback = kRequired,
    .doc =
        "sequences per step over all DP replicas; dp x micro_batch must divide it (micro-batches "
        "per pipeline = global_batch / (dp x micro_batch))"};

inline constexpr ChoiceKey kSchedule{.name = "schedule",
                                     .choices = {},
                                     .value = "1f1b",
                                     .table_doc = schedule_doc,
                                     .table_choices = schedule_choices};

inline constexpr IntegerKey kVirtualStages{
    .name = "virtual_stages",
    .lo = 1,
    .hi = 1024,
    .fallback = "1f1b: 1; interleaved: 2",
    .doc =
        "model chunks per pipeline rank; pp x virtual_stages must not exceed the model's layers"};

inline constexpr IntegerKey kMicrobatchGroup{
    .name = "microbatch_group",
    .lo = 1,
    .hi = 100'000,
    .fallback = "pp",
    .doc =
        "interleaved only: micro-batches that go through a chunk together before the next chunk "
        "(Megatron's order: pp; fewer is Meta's Llama 3 variant, N in its paper: fewer "
        "micro-batches in flight, so less activation memory, for a larger bubble; micro-batches "
        "need not be a multiple of it). A group too small for the order to finish is an error"};

inline constexpr IntegerKey kZero{
    .name = "zero",
    .lo = 0,
    .hi = 3,
    .also = "not 2",
    .value = 1,
    .doc =
        "0: gradients all-reduced, every DP rank holds all optimizer states; 1: reduce-scatter, "
        "optimizer states sharded over DP, updated parameters all-gathered; 3: parameters and "
        "gradients sharded too, each layer gathered before every forward and backward (prefetched "
        "one layer ahead) and reduce-scattered after every backward (docs/training-step.md); "
        "under 1f1b and interleaved only"};

inline constexpr ChoiceKey kRecompute{
    .name = "recompute",
    .choices = kRecomputeNames,
    .value = "none",
    .doc =
        "activation recomputation (Megatron's --recompute-granularity): full keeps each layer's "
        "input only and runs its forward again before its backward; selective runs "
        "recompute_modules again before each backward and does not keep what they made"};

inline constexpr ChoiceKey kRecomputeModules{
    .name = "recompute_modules",
    .choices = moe_layer::kRecomputeModuleNames,
    .shape = Shape::List,
    .fallback = "[\"core_attn\"]",
    .doc =
        "selective only (Megatron's --recompute-modules): core_attn saves nothing with "
        "FlashAttention and costs the attention forward; layernorm drops both norms' outputs (2 h "
        "per token) for their forwards; mlp a dense MLP's gate, up and SwiGLU outputs (3 ffn) for "
        "its forward GEMMs and SwiGLU; moe_act the experts' SwiGLU outputs for their SwiGLU; "
        "mla_up_proj MLA's per-head queries, keys and values for the up-projection GEMMs; "
        "shared_experts the shared experts' gate, up and SwiGLU outputs for their forward; moe "
        "everything the MoE part keeps but its input (router, expert rows, gate, up, SwiGLU, "
        "shared experts) for its whole forward, dispatch and combine included "
        "(docs/training-step.md#memory)"};

inline constexpr ChoiceKey kRecomputeMethod{
    .name = "recompute_method",
    .choices = kRecomputeMethodNames,
    .value = "uniform",
    .doc =
        "full only (Megatron's --recompute-method), per model stage (a chunk under interleaving): "
        "uniform keeps the input of every group of recompute_num_layers layers and runs the "
        "group's forward again before its backward; block keeps only the input of the stage's "
        "first recompute_num_layers layers, runs those again one at a time, and keeps everything "
        "the other layers make (docs/training-step.md#memory)"};

inline constexpr IntegerKey kRecomputeNumLayers{
    .name = "recompute_num_layers",
    .lo = 1,
    .hi = kMaxLayers,
    .also = "at most the layers of a model stage",
    .value = 1,
    .doc =
        "full only (Megatron's --recompute-num-layers): uniform's group size, or how many layers "
        "of each stage block recomputes"};

inline constexpr ChoiceKey kActivationDtype{
    .name = "activation_dtype",
    .choices = attention::kDtypeNames,
    .value = "bf16",
    .doc =
        "how saved activations that only GEMMs and SwiGLU read back are kept (the norms' outputs, "
        "MLA's latents, MLP and expert inputs, gate, up and SwiGLU outputs): fp8 is DeepSeek-V3's "
        "and FP8 training's caching; the norms' inputs, Q, K, V and the attention output stay BF16 "
        "(memory only: the casts are priced with the GEMMs' FP8 inputs)"};

inline constexpr ChoiceKey kGradDtype{.name = "grad_dtype",
                                      .choices = kWideDtypeNames,
                                      .value = "bf16",
                                      .doc = "the gradient buffer and its reduction over DP: bf16 "
                                             "is what NVIDIA's performance recipes run "
                                             "(Megatron-Bridge and NeMo set grad_reduce_in_fp32 = "
                                             "False); fp32 is Megatron-LM's own default under "
                                             "--bf16 and PyTorch FSDP2's reduce_dtype=float32 "
                                             "(docs/training-step.md#ep-overlap-in-the-"
                                             "interleaved-schedule-and-in-1f1b)"};

inline constexpr ChoiceKey kOptimizerMomentsDtype{
    .name = "optimizer_moments_dtype",
    .choices = kWideDtypeNames,
    .value = "fp32",
    .doc =
        "Adam's two moments (the master weight stays FP32): bf16 is DeepSeek-V3's, 8 bytes of "
        "optimizer state per parameter instead of 12, and less for Adam to read and write"};

inline constexpr NumberKey kStepOverheadMs{
    .name = "step_overhead_ms",
    .lo = 0,
    .hi = 1e6,
    .unit = Unit::Milliseconds,
    .value = 14.2,
    .doc =
        "the framework's fixed cost per step, after the optimizer and the parameter gathers on "
        "every GPU, its own phase (step_overhead); the default is Megatron-DeepSpeed's, fitted on "
        "one published log (docs/training-step.md#the-steps-fixed-cost); 0 leaves it out"};

inline constexpr IntegerKey kCpuOffloadLayers{
    .name = "cpu_offload_layers",
    .lo = 1,
    .hi = kMaxLayers,
    .also = "below the model's layers",
    .fallback = "none",
    .doc =
        "Megatron's --cpu-offloading-num-layers: the first N layers' saved activations go to host "
        "memory after their forward and come back before their backward, over the GPU's host link "
        "(cluster gpu.host_GBps) beside the next layer's compute; pp 1 and no recomputation, as "
        "Megatron requires (docs/training-step.md#activation-offload)"};

inline constexpr ChoiceKey kCrossEntropy{
    .name = "cross_entropy",
    .choices = kCrossEntropyNames,
    .value = "unfused",
    .doc =
        "the loss over the vocabulary on the last stage, by the bytes per logit it moves forward "
        "and backward: unfused is Megatron-LM's default (one PyTorch op at a time in FP32: 38 and "
        "14), fused its --cross-entropy-loss-fusion, NeMo's default (22 and 14), online one kernel "
        "(Transformer Engine's, Liger-Kernel's: 6 and 4; docs/training-step.md#the-output-layer)"};

inline constexpr IntegerKey kStageLayers{
    .name = "stage_layers",
    .lo = 1,
    .hi = kMaxLayers,
    .shape = Shape::List,
    .also = "one per model stage",
    .fallback = "even split",
    .doc =
        "layers of each model stage in order (Megatron's --pipeline-model-parallel-layout as "
        "counts; the schedule's model stages: pp x virtual_stages, pp under dualpipe, 2 pp under "
        "dualpipev), summing to the model's layers and "
        "its MTP blocks; the default gives the first and last stages the fewest "
        "(docs/training-step.md#stage-layers)"};

inline constexpr BooleanKey kFold{
    .name = "fold",
    .value = true,
    .doc =
        "false: every GPU of the mesh in one plan (each layer, activation transfer and gradient "
        "collective on every GPU), to check the folded step on a small cluster; `hopsim run "
        "--no-fold` sets it"};

// The layers' keys mean what they mean for transformer_layer; the rest are the step's.
inline constexpr auto kKeys = std::to_array<KeyRef>({&kKind,
                                                     &transformer::kSeqLen,
                                                     &attention::kMicroBatch,
                                                     &attention::kMask,
                                                     &attention::kDocuments,
                                                     &attention::kDocumentMeanTokens,
                                                     &attention::kDtype,
                                                     &attention::kFp8DotProductAttention,
                                                     &transformer::kMlpDtype,
                                                     &transformer::kCp,
                                                     &attention::kAttentionKernel,
                                                     &attention::kFp8Recipe,
                                                     &attention::kTpOverlap,
                                                     &transformer::kFfn,
                                                     &transformer::kMoe,
                                                     &kGlobalBatch,
                                                     &kSchedule,
                                                     &kVirtualStages,
                                                     &kMicrobatchGroup,
                                                     &kZero,
                                                     &kRecompute,
                                                     &kRecomputeModules,
                                                     &kRecomputeMethod,
                                                     &kRecomputeNumLayers,
                                                     &kActivationDtype,
                                                     &kGradDtype,
                                                     &kOptimizerMomentsDtype,
                                                     &kStepOverheadMs,
                                                     &kCpuOffloadLayers,
                                                     &kCrossEntropy,
                                                     &kStageLayers,
                                                     &kFold});
inline constexpr Section kSection{
    "experiment", "/workload (kind training_step)",
    "a whole training step: every layer, the pipeline schedule, DP gradients, the optimizer",
    kKeys};

}  // namespace hopsim::config::keys::step
