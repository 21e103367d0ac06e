// Layer kernels priced by the compute model, and the FLOPs helpers (layer_costs.hpp).
#include "workloads/costs/layer_costs.hpp"

#include <algorithm>

#include "sim/int_math.hpp"
#include "workloads/costs/layer_kernels.hpp"

namespace hopsim::work {
namespace {

// Sums the costs of `calls` into one entry (several kernel launches of one operation).
ComputeCost sum(const std::vector<ComputeCost>& calls) {
  ComputeCost total;
  total.source = Source::Exact;
  bool one_impl = true;
  for (const ComputeCost& c : calls) {
    total.time += c.time;
    total.flops.n += c.flops.n;
    total.bytes = total.bytes + c.bytes;
    total.source = std::max(total.source, c.source);  // the worst source of the parts
    one_impl = one_impl && (c.impl.empty() || total.impl.empty() || c.impl == total.impl);
    total.impl = total.impl.empty() ? c.impl : total.impl;
    total.from_base = total.from_base || c.from_base;
  }
  if (!one_impl) {
    total.impl = "several";  // tables of different kernels answered the calls
  }
  return total;
}

}  // namespace

void add_gemms(const std::vector<Gemm>& gemms, Dtype dtype, const ComputeModel& model,
               LayerCosts& out) {
  for (const Gemm& g : gemms) {
    const MemoryBytes cast = fp8_cast_bytes(g.m, g.k, g.n, model.fp8_recipe());
    if (dtype == Dtype::Fp8) {  // the input, before the forward
      out.fwd.emplace_back(g.name + ".fp8_cast",
                           model.memory(KernelClass::Fp8Cast, cast.fwd, Pass::Fwd));
    }
    out.fwd.emplace_back(g.name, model.gemm(dtype, g.m, g.n, g.k, GemmRole::Fprop));
    out.bwd.emplace_back(g.name + ".dgrad", model.gemm(dtype, g.m, g.n, g.k, GemmRole::Dgrad));
    out.bwd.emplace_back(g.name + ".wgrad", model.gemm(dtype, g.m, g.n, g.k, GemmRole::Wgrad));
    if (dtype == Dtype::Fp8) {  // the output gradient, before both (bwd runs in reverse)
      out.bwd.emplace_back(g.name + ".fp8_cast",
                           model.memory(KernelClass::Fp8Cast, cast.bwd, Pass::Bwd));
    }
  }
}

MlaProjections mla_projections(const ModelSpec& m, std::int64_t tokens, std::int64_t tp) {
  const MlaShape& a = m.mla_shape;
  const std::int64_t heads = m.heads / tp;
  const std::int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  const auto split = [tp](std::int64_t n) { return std::max<std::int64_t>(1, n / tp); };
  MlaProjections out;
  if (a.q_lora_rank > 0) {
    out.before.push_back({"q_down_projection", tokens, split(a.q_lora_rank), m.hidden});
    out.before.push_back({"q_up_projection", tokens, heads * qk, a.q_lora_rank});
  } else {
    out.before.push_back({"q_projection", tokens, heads * qk, m.hidden});
  }
  // It reads the query's input and casts it again, as DeepSeek's profile shows (43 and 42 us).
  out.before.push_back(
      {"kv_down_projection", tokens, split(a.kv_lora_rank + a.qk_rope_head_dim), m.hidden});
  out.before.push_back(
      {"kv_up_projection", tokens, heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank});
  out.after.push_back({"output_projection", tokens, m.hidden, heads * a.v_head_dim});
  return out;
}

bool mla_projections_in_fp8(const ModelSpec& m, const ComputeModel& model) {
  return m.mla && model.fp8_recipe() == Fp8Recipe::DeepSeek;
}

void add_attention(const std::vector<AttentionShape>& calls, Dtype dtype,
                   const ComputeModel& model, LayerCosts& out) {
  std::vector<ComputeCost> fwd;
  std::vector<ComputeCost> bwd;
  for (const AttentionShape& s : calls) {
    fwd.push_back(model.attention(dtype, s, Pass::Fwd));
    bwd.push_back(model.attention(dtype, s, Pass::Bwd));
  }
  out.fwd.emplace_back("attention", sum(fwd));
  out.bwd.emplace_back("attention", sum(bwd));
  out.fwd.back().second.kind = KernelClass::AttentionFwd;
  out.bwd.back().second.kind = KernelClass::AttentionBwd;
}


std::pair<double, double> head_dims(const ModelSpec& m) {
  if (m.mla) {
    return {d(m.mla_shape.qk_nope_head_dim + m.mla_shape.qk_rope_head_dim),
            d(m.mla_shape.v_head_dim)};
  }
  return {d(m.head_dim), d(m.head_dim)};
}

OpFlops backward_flops(const OpFlops& fwd) {
  OpFlops bwd;
  for (const auto& [name, flops] : fwd) {
    // GEMMs: data and weight gradients (2x); attention recomputes scores (2.5x).
    bwd.emplace_back(name, flops * (name == "attention_scores" ? 2.5 : 2.0));
  }
  return bwd;
}

}  // namespace hopsim::work
