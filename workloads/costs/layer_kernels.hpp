// The memory-bound kernels of a transformer layer, in closed form: the bytes each moves, forward
// and backward (docs/compute-model.md, "Kernel classes"). The compute model prices them as
// bytes over achievable HBM bandwidth plus a launch.
//
// t tokens, h hidden, BF16 activations (2 bytes) unless an FP8 cast writes 1-byte copies:
//   norm       RMSNorm: fwd reads x, writes y (2 th each) and 1/rms (4 t); bwd reads x, dy and
//              1/rms, writes dx: 6 th + 4 t
//   residual   an add: reads two, writes one: 6 th (fwd; bwd sums two gradients, the same)
//   rotary     queries and keys of width w, read and written: 4 t w (fwd and bwd)
//   swiglu     gate and up (2f) in, f out: 6 t f; bwd reads 2f and df, writes 2f: 10 t f
//   fp8_cast   cast_transpose: quantize an input of width w with its transposed copy for the
//              weight gradient: reads 2, writes 1 + 1: 4 t w (bwd: the same for each output
//              gradient, 4 t n); deepseek: the input per token (reads 2, writes 1: 3 t w),
//              before the weight gradient its cached FP8 copy cast back (1 + 2) and cast per
//              channel transposed (2 + 1): 6 t w, and the output gradient per token and per
//              channel transposed: 6 t n
//   router     scores of E experts in FP32, read and written, top-k ids and weights: 8 t E +
//              8 t k; bwd reads scores and gradients, writes dlogits: 12 t E
//   permute    rows into the grouped GEMMs' order: reads and writes each row (1-byte FP8
//              rows as dispatched: 2 r h); unpermute and both backwards move BF16 rows: 4 r h
//   copy       MLA's layouts, H heads with n-wide plain and r-wide rotary query/key parts and
//              v-wide values: fwd assembles each head's key from its plain part and the one
//              rotary key shared by every head (reads 2 t H n + 2 t r, writes 2 t H (n + r))
//              and makes the values contiguous (reads and writes 2 t H v); bwd sums the rotary
//              key's gradient over the heads (reads 2 t H r, writes 2 t r) and writes the plain
//              keys' and the values' gradients side by side as the up-projection's output
//              gradient (reads and writes 2 t H (n + v))
//   attention_bwd_prep  FlashAttention's backward pre-pass (reads O and dO, writes the row sums
//              in FP32) and post-pass (dQ from FP32 to BF16): 4 t H d_v + 4 t H + 6 t H d_qk
//   cross_entropy  the loss over t tokens of v = vocab/tp BF16 logits each, by implementation:
//     unfused  Megatron's default (VocabParallelCrossEntropy, one PyTorch op each, in FP32):
//              fwd: cast to FP32 (reads 2, writes 4), max (4), subtract it (4 + 4), exp
//              (4 + 4), sum (4), divide by the sum (4 + 4): 38 t v, plus 16 t for the row
//              figures; bwd: scale the saved softmax by the loss gradient (4 + 4), cast to
//              BF16 (4 + 2): 14 t v
//     fused    Megatron's --cross-entropy-loss-fusion, native implementation (NeMo's default):
//              the same FP32 steps in three compiled kernels: fwd cast and max (2 + 4),
//              subtract, exp and sum (4 + 4), divide (4 + 4): 22 t v, plus 16 t; bwd as unfused
//     online   one online-softmax kernel (Transformer Engine's parallel cross-entropy,
//              Megatron's --cross-entropy-fusion-impl te, Liger-Kernel's): fwd reads the BF16
//              logits for the row maximum and sum, then again to write the gradient in place:
//              6 t v, plus 8 t; bwd scales that gradient by the loss's: 4 t v, plus 4 t (what
//              calibrate/ times as cross_entropy)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "workloads/costs/layer_costs.hpp"

namespace hopsim::work {

struct MemoryBytes {
  Bytes fwd;
  Bytes bwd;
};

MemoryBytes norm_bytes(std::int64_t tokens, std::int64_t hidden);
MemoryBytes residual_bytes(std::int64_t tokens, std::int64_t hidden);
MemoryBytes rotary_bytes(std::int64_t tokens, std::int64_t width);
/// The rotated width of `q_heads` query and `kv_heads` key heads on one GPU: MLA rotates
/// qk_rope_head_dim of each query head and one shared key, others every head's head_dim.
std::int64_t rotary_width(const ModelSpec& m, std::int64_t q_heads, std::int64_t kv_heads);
MemoryBytes swiglu_bytes(std::int64_t rows, std::int64_t ffn);
/// An FP8 GEMM's input (fwd: rows x k) and output gradient (bwd: rows x n) cast as `recipe`'s
/// row says (fp8_recipe_row).
MemoryBytes fp8_cast_bytes(std::int64_t rows, std::int64_t k, std::int64_t n,
                           Fp8Recipe recipe = Fp8Recipe::CastTranspose);
MemoryBytes router_bytes(std::int64_t tokens, std::int64_t experts, std::int64_t top_k);
/// Permute (`fp8_rows`: the rows arrive as 1-byte FP8) or unpermute of `rows` rows of `hidden`.
MemoryBytes permute_bytes(std::int64_t rows, std::int64_t hidden, bool fp8_rows);
/// MLA's layout copies around attention for `heads` heads of this GPU (0 for other models).
MemoryBytes mla_layout_bytes(const ModelSpec& m, std::int64_t tokens, std::int64_t heads);
/// The backward only (fwd is 0): `heads` query heads of this GPU.
MemoryBytes attention_bwd_prep_bytes(std::int64_t tokens, std::int64_t heads, std::int64_t d_qk,
                                     std::int64_t d_v);

enum class CrossEntropyKernel : std::uint8_t { Unfused, Fused, Online };

/// "unfused", "fused" or "online".
std::string_view cross_entropy_kernel_name(CrossEntropyKernel k);
std::optional<CrossEntropyKernel> cross_entropy_kernel_named(std::string_view name);

/// The loss's bytes over `tokens` rows of `vocab` logits.
MemoryBytes cross_entropy_bytes(std::int64_t tokens, std::int64_t vocab, CrossEntropyKernel k);

/// MLA's kernels beside its projections and attention, on `tokens` tokens and `heads` heads of
/// this GPU: the compressed query's and key-value's RMSNorms (DeepSeek-V3's q_a and kv_a
/// layernorms) and the layout copies (`copy`). Nothing for other models.
void add_mla_kernels(const ModelSpec& m, std::int64_t tokens, std::int64_t heads,
                     const ComputeModel& model, LayerCosts& out);

/// Appends a memory-bound kernel `name` of class `kind` to both passes (a pass of 0 bytes is
/// left out).
void add_memory(const std::string& name, KernelClass kind, const MemoryBytes& bytes,
                const ComputeModel& model, LayerCosts& out);

}  // namespace hopsim::work
