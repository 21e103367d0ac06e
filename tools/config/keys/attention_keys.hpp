// The keys of an `attention_layer` workload and of its context-parallel algorithm; the
// transformer layer and the training step read their attention part with the same keys.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tools/config/key.hpp"
#include "workloads/cp/attention_layer_job.hpp"
#include "workloads/cp/cp_algorithms.hpp"

namespace hopsim::config::keys::attention {

inline constexpr std::array kKindName{work::AttentionLayerJob::kKind};
// Each in its enum's order: work::AttentionMask, LayerMode, Passes, Dtype.
inline constexpr std::array<std::string_view, 3> kMaskNames{"causal", "full", "document"};
inline constexpr std::array<std::string_view, 2> kModeNames{"training", "prefill"};
inline constexpr std::array<std::string_view, 3> kPassNames{"forward", "backward", "both"};
inline constexpr std::array<std::string_view, 2> kDtypeNames{"bf16", "fp8"};
// Named as work::fp8_recipe_named and work::attention_kernel_named know them.
inline constexpr std::array<std::string_view, 5> kFp8RecipeNames{
    "cast_transpose", "deepseek", "current", "mxfp8", "nvfp4"};
inline constexpr std::array<std::string_view, 6> kAttentionKernelNames{
    "auto", "fa2", "fa3", "cudnn", "sdpa_flash", "flex"};
// Sequences up to 2^31 tokens.
inline constexpr std::int64_t kMaxTokens = std::int64_t{1} << 31;
inline constexpr std::int64_t kMaxCount = std::int64_t{1} << 20;

inline constexpr ChoiceKey kKind{
    .name = "kind",
    .choices = kKindName,
    .fallback = kRequired,
    .doc =
        "one transformer layer's attention (or with mlp the whole dense layer) under TP and "
        "CP"};

inline constexpr IntegerKey kSeqLen{
    .name = "seq_len",
    .lo = 1,
    .hi = kMaxTokens,
    .fallback = kRequired,
    .doc = "new tokens per sequence; cp (contiguous) or 2 x cp (zigzag) must divide it"};

inline constexpr IntegerKey kMicroBatch{.name = "micro_batch",
                                        .lo = 1,
                                        .hi = kMaxCount,
                                        .value = 1,
                                        .doc = "sequences per micro-batch"};

inline constexpr ChoiceKey kMask{
    .name = "mask",
    .choices = kMaskNames,
    .value = "causal",
    .doc = "attention mask; document: causal inside each packed document"};

inline constexpr IntegerKey kDocuments{
    .name = "documents",
    .lo = 1,
    .hi = kMaxTokens,
    .shape = Shape::List,
    .fallback = "none",
    .doc = "mask document: the packed documents' lengths, summing to seq_len"};

inline constexpr IntegerKey kDocumentMeanTokens{
    .name = "document_mean_tokens",
    .lo = 1,
    .hi = kMaxTokens,
    .fallback = "none",
    .doc = "mask document: draw lengths from an exponential distribution of this mean (seeded)"};

inline constexpr IntegerKey kCachedTokens{
    .name = "cached_tokens",
    .lo = 0,
    .hi = kMaxTokens,
    .value = 0,
    .doc = "prefill: tokens already in the KV cache before the new ones (ring, ring_pass_q)"};

inline constexpr NumberKey kRequestOverheadMs{
    .name = "request_overhead_ms",
    .lo = 0,
    .hi = 1e6,
    .unit = Unit::Milliseconds,
    .value = 0,
    .doc =
        "prefill only: what a request costs beyond its layers (the serving stack's fixed "
        "part), paid on every GPU before the first layer (docs/context-parallelism.md)"};

inline constexpr BooleanKey kMlp{
    .name = "mlp", .value = false, .doc = "also the dense SwiGLU MLP: the whole layer"};

inline constexpr IntegerKey kLayers{.name = "layers",
                                    .lo = 1,
                                    .hi = kMaxCount,
                                    .value = 1,
                                    .doc = "identical layers run one after another"};

inline constexpr ChoiceKey kMode{.name = "mode",
                                 .choices = kModeNames,
                                 .value = "training",
                                 .doc = "prefill: inference time to first token (forward only)"};

inline constexpr ChoiceKey kPasses{
    .name = "passes",
    .choices = kPassNames,
    .fallback = "training: both; prefill: forward",
    .doc = "which passes run (backward: the layers in reverse after the forward ones)"};

inline constexpr ChoiceKey kDtype{
    .name = "dtype",
    .choices = kDtypeNames,
    .value = "bf16",
    .doc = "the attention's projections (QKV, output); the attention kernel and K/V on the "
           "wire too with fp8_dot_product_attention"};

inline constexpr BooleanKey kFp8DotProductAttention{
    .name = "fp8_dot_product_attention",
    .value = false,
    .doc = "with dtype fp8, the attention kernel also runs FP8 and CP sends K/V as FP8 "
           "(Transformer Engine's fp8_dpa, Megatron's --fp8-dot-product-attention); false, "
           "as Megatron's, NeMo's and DeepSeek-V3's recipes run: the kernel and K/V in BF16 "
           "between FP8 projections; docs/compute-model.md#fp8-attention"};

inline constexpr ChoiceKey kMlpDtype{
    .name = "mlp_dtype", .choices = kDtypeNames, .fallback = "dtype", .doc = "the MLP's GEMMs"};

inline constexpr ValueKey kCp{.name = "cp",
                              .type = "object",
                              .fallback = "ring, zigzag",
                              .doc = "the context-parallel algorithm"};

inline constexpr ChoiceKey kFp8Recipe{
    .name = "fp8_recipe",
    .choices = kFp8RecipeNames,
    .value = "cast_transpose",
    .doc =
        "how FP8 GEMMs' inputs and output gradients are cast, by the bytes the casts move per"
        " element: cast_transpose is Transformer Engine's delayed scaling, its fused cast with"
        " the transposed copy (4 forward, 4 backward); current its current scaling, an amax pass"
        " first (6, 6); mxfp8 its MXFP8 block scaling, two copies with a scale per 32 elements"
        " (4.0625, 4.0625; Blackwell's tensor cores, a what-if on Hopper); nvfp4 its NVFP4"
        " block scaling, an amax pass, then two FP4 copies with a scale per 16 elements (5.125,"
        " 5.125), its GEMMs at the GPU's FP4 peak (gpu.peak_fp4_tflops: Blackwell only);"
        " deepseek is DeepSeek-V3's per-token and per-channel casts "
        "with the cached FP8 input cast back before the weight gradient (3 forward; 6 + 6 "
        "backward; docs/compute-model.md#kernel-classes), and with it an MLA model's "
        "projections each its own FP8 GEMM (DeepSeek-V3 quantizes every linear layer but "
        "embedding, head and router)"};

inline constexpr ChoiceKey kAttentionKernel{
    .name = "attention_kernel",
    .choices = kAttentionKernelNames,
    .value = "auto",
    .doc =
        "the attention kernel the framework runs: only calibration tables of that impl "
        "answer, and the roofline takes its published rates by call size (auto: any table, "
        "FlashAttention-3's rates); cudnn is Megatron/NeMo's (Transformer Engine on Hopper), "
        "sdpa_flash PyTorch SDPA's flash backend (TorchTitan's), flex FlexAttention; "
        "docs/compute-model.md#attention-by-size-and-by-kernel"};

inline constexpr ChoiceKey kTpOverlap{
    .name = "tp_overlap",
    .choices = work::kTpOverlapNames,
    .value = "none",
    .doc =
        "how the TP all-gathers and reduce-scatters run beside their GEMMs: none (each exposed, "
        "Megatron's default), userbuffers (Megatron/Transformer Engine's --tp-comm-overlap as "
        "NeMo's H100 BF16 recipes set it), async_tp (PyTorch's AsyncTP, TorchTitan); "
        "docs/transformer-layer.md#tp-overlap"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kKind, &kSeqLen, &kMicroBatch, &kMask, &kDocuments, &kDocumentMeanTokens, &kCachedTokens,
     &kRequestOverheadMs, &kMlp, &kLayers, &kMode, &kPasses, &kDtype, &kFp8DotProductAttention,
     &kMlpDtype, &kCp, &kFp8Recipe, &kAttentionKernel, &kTpOverlap});
inline constexpr Section kSection{"experiment", "/workload (kind attention_layer)",
                                  "an attention layer under context parallelism", kKeys};

}  // namespace hopsim::config::keys::attention

namespace hopsim::config::keys::attention_cp {

// In work::CpAlgorithm's and work::CpBalance's order.
/// The CP algorithms as their table names them (workloads/cp/cp_algorithms.hpp).
inline constexpr auto kAlgorithmNames = work::cp_algorithm_names();
inline constexpr std::array<std::string_view, 2> kBalanceNames{"contiguous", "zigzag"};

inline constexpr ChoiceKey kAlgorithm{.name = "algorithm",
                                      .choices = kAlgorithmNames,
                                      .value = "ring",
                                      .table_doc = work::cp_algorithms_described};

inline constexpr ChoiceKey kBalance{
    .name = "balance",
    .choices = kBalanceNames,
    .value = "zigzag",
    .doc = "contiguous: rank i holds chunk i; zigzag: 2 x cp chunks, rank i holds i and 2cp-1-i"};

inline constexpr IntegerKey kUlyssesDegree{
    .name = "ulysses_degree",
    .lo = 1,
    .hi = std::int64_t{1} << 24,
    .fallback = "cp",
    .doc = "ulysses: ranks per all-to-all group; a pass-KV ring runs over cp / this"};

inline constexpr BooleanKey kReplicateKv{
    .name = "replicate_kv",
    .value = false,
    .doc = "ulysses with more ranks than KV heads: each rank receives a copy of its KV head"};

// In work::CpImpl's and work::CpRotate's order.
inline constexpr std::array<std::string_view, 2> kImplNames{"megatron", "torch"};
inline constexpr std::array<std::string_view, 2> kRotateNames{"allgather", "alltoall"};

inline constexpr ChoiceKey kImpl{
    .name = "impl",
    .choices = kImplNames,
    .value = "megatron",
    .doc = "whose ring runs: megatron (Megatron-Core/Transformer Engine's pass-KV ring), or "
           "torch (PyTorch's context_parallel as TorchTitan runs it: SDPA per ring step, K/V "
           "with every query head, load-balanced halves, FP32 merges and dK/dV; algorithm ring "
           "only; docs/context-parallelism.md#pytorch-context-parallelism-torchtitan)"};

inline constexpr ChoiceKey kRotateMethod{
    .name = "rotate_method",
    .choices = kRotateNames,
    .value = "allgather",
    .doc = "impl torch only (PyTorch's _cp_options.rotate_method, TorchTitan's "
           "context_parallel_rotate_method): allgather gathers every K/V block once per "
           "attention call, beside its first step; alltoall shifts the blocks one rank a step"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kAlgorithm, &kBalance, &kUlyssesDegree, &kReplicateKv, &kImpl, &kRotateMethod});
inline constexpr Section kSection{"experiment", "/workload/cp (kind attention_layer)",
                                  "the context-parallel algorithm", kKeys};

}  // namespace hopsim::config::keys::attention_cp
