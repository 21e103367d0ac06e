// Bytes of the memory-bound layer kernels (layer_kernels.hpp).
#include "workloads/costs/layer_kernels.hpp"

#include <algorithm>
#include <array>

#include "sim/int_math.hpp"
#include "workloads/compute/enum_names.hpp"

namespace hopsim::work {
namespace {

// Whole bytes; beyond 9e18 (no real layer comes near) held there, which the compute model
// then refuses as a kernel longer than can be simulated, rather than overflowing.
Bytes bytes(double b) { return Bytes{static_cast<std::int64_t>(std::min(b, 9e18))}; }

constexpr std::array<std::string_view, 3> kCrossEntropyNames{"unfused", "fused", "online"};

}  // namespace

MemoryBytes norm_bytes(std::int64_t tokens, std::int64_t hidden) {
  const double th = d(tokens) * d(hidden);
  return {bytes(4 * th + 4 * d(tokens)), bytes(6 * th + 4 * d(tokens))};
}

MemoryBytes residual_bytes(std::int64_t tokens, std::int64_t hidden) {
  const double th = d(tokens) * d(hidden);
  return {bytes(6 * th), bytes(6 * th)};
}

MemoryBytes rotary_bytes(std::int64_t tokens, std::int64_t width) {
  const double tw = d(tokens) * d(width);
  return {bytes(4 * tw), bytes(4 * tw)};
}

std::int64_t rotary_width(const ModelSpec& m, std::int64_t q_heads, std::int64_t kv_heads) {
  return m.mla ? (q_heads + 1) * m.mla_shape.qk_rope_head_dim : (q_heads + kv_heads) * m.head_dim;
}

MemoryBytes swiglu_bytes(std::int64_t rows, std::int64_t ffn) {
  const double rf = d(rows) * d(ffn);
  return {bytes(6 * rf), bytes(10 * rf)};
}

MemoryBytes fp8_cast_bytes(std::int64_t rows, std::int64_t k, std::int64_t n,
                           Fp8Recipe recipe) {
  const Fp8RecipeRow& row = fp8_recipe_row(recipe);
  const double input = d(rows) * d(k);
  return {bytes(row.fwd_input * input),
          bytes(row.bwd_input * input + row.bwd_output_grad * d(rows) * d(n))};
}

MemoryBytes router_bytes(std::int64_t tokens, std::int64_t experts, std::int64_t top_k) {
  const double te = d(tokens) * d(experts);
  return {bytes(8 * te + 8 * d(tokens) * d(top_k)), bytes(12 * te)};
}

MemoryBytes permute_bytes(std::int64_t rows, std::int64_t hidden, bool fp8_rows) {
  const double rh = d(rows) * d(hidden);
  return {bytes((fp8_rows ? 2 : 4) * rh), bytes(4 * rh)};
}

MemoryBytes mla_layout_bytes(const ModelSpec& m, std::int64_t tokens, std::int64_t heads) {
  if (!m.mla) {
    return {Bytes{0}, Bytes{0}};
  }
  const MlaShape& a = m.mla_shape;
  const double th = d(tokens) * d(heads);
  const double n = d(a.qk_nope_head_dim);
  const double r = d(a.qk_rope_head_dim);
  const double v = d(a.v_head_dim);
  const double shared = 2 * d(tokens) * r;  // the one rotary key, read or written once
  return {bytes(2 * th * n + shared + 2 * th * (n + r) + 4 * th * v),
          bytes(2 * th * r + shared + 4 * th * (n + v))};
}

MemoryBytes attention_bwd_prep_bytes(std::int64_t tokens, std::int64_t heads, std::int64_t d_qk,
                                     std::int64_t d_v) {
  const double th = d(tokens) * d(heads);
  return {Bytes{0}, bytes(th * (4 * d(d_v) + 4 + 6 * d(d_qk)))};
}

std::string_view cross_entropy_kernel_name(CrossEntropyKernel k) {
  return kCrossEntropyNames[static_cast<std::size_t>(k)];
}

std::optional<CrossEntropyKernel> cross_entropy_kernel_named(std::string_view name) {
  return enum_named<CrossEntropyKernel>(kCrossEntropyNames, name);
}

MemoryBytes cross_entropy_bytes(std::int64_t tokens, std::int64_t vocab, CrossEntropyKernel k) {
  const double tv = d(tokens) * d(vocab);
  switch (k) {
    case CrossEntropyKernel::Unfused:
      return {bytes(38 * tv + 16 * d(tokens)), bytes(14 * tv)};
    case CrossEntropyKernel::Fused:
      return {bytes(22 * tv + 16 * d(tokens)), bytes(14 * tv)};
    case CrossEntropyKernel::Online:
      break;
  }
  return {bytes(6 * tv + 8 * d(tokens)), bytes(4 * tv + 4 * d(tokens))};
}

void add_memory(const std::string& name, KernelClass kind, const MemoryBytes& bytes,
                const ComputeModel& model, LayerCosts& out) {
  if (bytes.fwd.n > 0) {
    out.fwd.emplace_back(name, model.memory(kind, bytes.fwd, Pass::Fwd));
  }
  if (bytes.bwd.n > 0) {
    out.bwd.emplace_back(name, model.memory(kind, bytes.bwd, Pass::Bwd));
  }
}

void add_mla_kernels(const ModelSpec& m, std::int64_t tokens, std::int64_t heads,
                     const ComputeModel& model, LayerCosts& out) {
  if (!m.mla) {
    return;
  }
  if (m.mla_shape.q_lora_rank > 0) {
    add_memory("q_latent_norm", KernelClass::Norm, norm_bytes(tokens, m.mla_shape.q_lora_rank),
               model, out);
  }
  add_memory("kv_latent_norm", KernelClass::Norm, norm_bytes(tokens, m.mla_shape.kv_lora_rank),
             model, out);
  add_memory("mla_layout", KernelClass::Copy, mla_layout_bytes(m, tokens, heads), model, out);
}

}  // namespace hopsim::work
