// The output layer of a training step on one GPU of the last pipeline stage, for one
// micro-batch: the final RMSNorm over the GPU's sequence-parallel share of the tokens, the head
// GEMM (BF16) over every token of its TP group against its vocab/tp columns, and the
// cross-entropy loss over those logits (docs/training-step.md, "The output layer").
//
// Cross-entropy bytes over t tokens and v = vocab/tp logits each (the logits are BF16):
//   unfused  Megatron's default (VocabParallelCrossEntropy, one PyTorch op each, in FP32):
//            fwd: cast to FP32 (reads 2, writes 4), max (4), subtract it (4 + 4), exp (4 + 4),
//            sum (4), divide by the sum (4 + 4): 38 t v, plus 16 t for the row figures;
//            bwd: scale the saved softmax by the loss gradient (4 + 4), cast to BF16 (4 + 2):
//            14 t v
//   fused    Megatron's --cross-entropy-loss-fusion with its native implementation (NeMo's
//            default): the same FP32 steps in three compiled kernels: fwd cast and max (2 + 4),
//            subtract, exp and sum (4 + 4), divide (4 + 4): 22 t v, plus 16 t; bwd as unfused
//   online   one online-softmax kernel (Transformer Engine's parallel cross-entropy, Megatron's
//            --cross-entropy-fusion-impl te, Liger-Kernel's): fwd reads the BF16 logits for
//            the row maximum and sum, then again to write the gradient in place: 6 t v, plus
//            8 t; bwd scales that gradient by the loss's: 4 t v, plus 4 t (what calibrate/
//            times as cross_entropy)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "workloads/costs/layer_costs.hpp"
#include "workloads/costs/layer_kernels.hpp"

namespace hopsim::work {

enum class CrossEntropyKernel : std::uint8_t { Unfused, Fused, Online };

/// "unfused", "fused" or "online".
std::string_view cross_entropy_kernel_name(CrossEntropyKernel k);
std::optional<CrossEntropyKernel> cross_entropy_kernel_named(std::string_view name);

/// The loss's bytes over `tokens` rows of `vocab` logits.
MemoryBytes cross_entropy_bytes(std::int64_t tokens, std::int64_t vocab, CrossEntropyKernel k);

/// The output layer's kernels on one GPU: `tokens` the TP group's (sequence x micro-batch /
/// cp), `tp` splitting the vocabulary and, by sequence parallelism, the norm's tokens.
LayerCosts output_layer_costs(const ModelSpec& m, std::int64_t tokens, std::int64_t tp,
                              CrossEntropyKernel loss, const ComputeModel& model);

}  // namespace hopsim::work
