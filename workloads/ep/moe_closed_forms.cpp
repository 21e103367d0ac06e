// Closed forms and kernel costs of the MoE layer.
#include "workloads/ep/moe_closed_forms.hpp"

#include <algorithm>
#include <string>
#include <tuple>

#include "sim/int_math.hpp"
#include "workloads/costs/layer_kernels.hpp"

namespace hopsim::work {

LayerCosts moe_attention_costs(const ModelSpec& m, const ParallelSpec& p, std::int64_t tokens,
                               std::int64_t keys_before, bool attention, const ComputeModel& model,
                               Dtype router) {
  const LayerParams lp = layer_params(m, true);
  LayerCosts out;
  // The residual add of the layer's MoE output, on the stream before the next layer's work.
  add_memory("moe_residual", KernelClass::Residual, residual_bytes(tokens, m.hidden), model, out);
  if (attention) {
    const std::int64_t heads = m.heads / p.tp;
    add_memory("attention_norm", KernelClass::Norm, norm_bytes(tokens, m.hidden), model, out);
    // DeepSeek's FP8 recipe: MLA's projections each their own FP8 GEMM; otherwise one BF16
    // GEMM of the same FLOPs, tokens x hidden x (weights / hidden).
    const bool fp8 = mla_projections_in_fp8(m, model);
    const MlaProjections mla = fp8 ? mla_projections(m, tokens, p.tp) : MlaProjections{};
    if (fp8) {
      add_gemms(mla.before, Dtype::Fp8, model, out);
    } else {
      const auto width = static_cast<std::int64_t>(lp.attention / static_cast<double>(m.hidden));
      add_gemms({{"attention_projections", tokens, width / p.tp, m.hidden}}, Dtype::Bf16, model,
                out);
    }
    AttentionShape self;
    self.d_qk = m.mla ? m.mla_shape.qk_nope_head_dim + m.mla_shape.qk_rope_head_dim : m.head_dim;
    self.d_v = m.mla ? m.mla_shape.v_head_dim : m.head_dim;
    self.mask = keys_before > 0 ? Mask::CausalBottomRight : Mask::CausalTopLeft;
    self.s_q = tokens;
    self.s_kv = keys_before + tokens;
    self.bh = heads;
    const std::int64_t kv_heads = std::max<std::int64_t>(1, m.kv_heads / p.tp);
    add_memory("rotary", KernelClass::Rotary,
               rotary_bytes(tokens, rotary_width(m, heads, kv_heads)), model, out);
    add_mla_kernels(m, tokens, heads, model, out);
    add_attention({self}, Dtype::Bf16, model, out);
    add_memory("attention_bwd_prep", KernelClass::AttentionBwdPrep,
               attention_bwd_prep_bytes(tokens, heads, self.d_qk, self.d_v), model, out);
    add_gemms(mla.after, Dtype::Fp8, model, out);
    add_memory("attention_residual", KernelClass::Residual, residual_bytes(tokens, m.hidden), model,
               out);
  }
  add_memory("moe_norm", KernelClass::Norm, norm_bytes(tokens, m.hidden), model, out);
  add_gemms({{"router", tokens, m.moe.routed_experts, m.hidden}}, router, model, out);
  add_memory("router_topk", KernelClass::Router,
             router_bytes(tokens, m.moe.routed_experts, m.moe.top_k), model, out);
  return out;
}

LayerCosts moe_expert_costs(const ModelSpec& m, const ParallelSpec& p,
                            std::int64_t tokens_per_expert, const ComputeModel& model,
                            std::int64_t local_experts, Dtype experts) {
  const std::int64_t local = local_experts > 0 ? local_experts : m.moe.routed_experts / p.ep;
  const std::int64_t ffn = m.moe.expert_ffn_hidden;
  const std::int64_t rows = local * tokens_per_expert;
  const bool fp8 = experts == Dtype::Fp8;
  LayerCosts out;
  // FP8: rows arrive in FP8 (DeepEP's dispatch); permuted into expert order, back after the
  // experts. BF16: rows arrive in BF16 and no GEMM input is cast.
  add_memory("permute", KernelClass::Permute, permute_bytes(rows, m.hidden, fp8), model, out);
  const auto grouped = [&](const std::string& name, std::int64_t n, std::int64_t k,
                           const MemoryBytes& cast) {
    if (fp8 && cast.fwd.n > 0) {
      out.fwd.emplace_back(name + ".fp8_cast",
                           model.memory(KernelClass::Fp8Cast, cast.fwd, Pass::Fwd));
    }
    out.fwd.emplace_back(
        name, model.grouped_gemm(experts, local, tokens_per_expert, n, k, GemmRole::Fprop));
    out.bwd.emplace_back(name + ".dgrad", model.grouped_gemm(experts, local, tokens_per_expert, n,
                                                             k, GemmRole::Dgrad));
    out.bwd.emplace_back(name + ".wgrad", model.grouped_gemm(experts, local, tokens_per_expert, n,
                                                             k, GemmRole::Wgrad));
    if (fp8) {
      out.bwd.emplace_back(name + ".fp8_cast",
                           model.memory(KernelClass::Fp8Cast, cast.bwd, Pass::Bwd));
    }
  };
  // gate+up reads the dispatched FP8 rows (no cast forward); down's input is SwiGLU's output.
  grouped("experts_gate_up", 2 * ffn, m.hidden,
          {Bytes{0}, fp8_cast_bytes(rows, m.hidden, 2 * ffn, model.fp8_recipe()).bwd});
  add_memory("experts_swiglu", KernelClass::SwiGlu, swiglu_bytes(rows, ffn), model, out);
  grouped("experts_down", m.hidden, ffn, fp8_cast_bytes(rows, ffn, m.hidden, model.fp8_recipe()));
  add_memory("unpermute", KernelClass::Permute, permute_bytes(rows, m.hidden, false), model, out);
  return out;
}

LayerCosts dispatcher_permute_costs(const ModelSpec& m, std::int64_t tokens, std::int64_t top_k,
                                    const ComputeModel& model) {
  LayerCosts out;
  const MemoryBytes bytes = permute_bytes(tokens * top_k, m.hidden, false);
  add_memory("dispatcher_permute", KernelClass::Permute, bytes, model, out);
  add_memory("dispatcher_unpermute", KernelClass::Permute, bytes, model, out);
  return out;
}

LayerCosts moe_shared_costs(const ModelSpec& m, std::int64_t tokens, const ComputeModel& model,
                            Dtype shared) {
  LayerCosts out;
  const std::int64_t ffn = m.moe.expert_ffn_hidden * m.moe.shared_experts;
  if (m.moe.shared_experts > 0) {
    // FP8: the gate+up's input cast is the tokens' quantization before dispatch, which the
    // routed experts' rows share.
    add_gemms({{"shared_gate_up", tokens, 2 * ffn, m.hidden}}, shared, model, out);
    add_memory("shared_swiglu", KernelClass::SwiGlu, swiglu_bytes(tokens, ffn), model, out);
    add_gemms({{"shared_down", tokens, m.hidden, ffn}}, shared, model, out);
  }
  return out;
}

LayerCosts moe_layer_costs(const ModelSpec& m, const ParallelSpec& p, const MoeLayerJob& job,
                           const ComputeModel& model) {
  const std::int64_t tokens = job.routing.tokens_per_gpu;
  LayerCosts out = moe_attention_costs(m, p, tokens, 0, job.attention, model, job.dtypes.router);
  // Balanced routing: the GPU's experts receive tokens x top_k rows in all.
  const std::int64_t local = m.moe.routed_experts / p.ep;
  const LayerCosts permute = ep_algorithm_row(job.algorithm).permutes_locally
                                ? dispatcher_permute_costs(m, tokens, job.routing.top_k, model)
                                : LayerCosts{};
  for (const LayerCosts& part : {moe_expert_costs(m, p, tokens * job.routing.top_k / local, model,
                                                  local, job.dtypes.experts),
                                 moe_shared_costs(m, tokens, model, job.dtypes.shared), permute}) {
    out.fwd.insert(out.fwd.end(), part.fwd.begin(), part.fwd.end());
    out.bwd.insert(out.bwd.end(), part.bwd.begin(), part.bwd.end());
  }
  return out;
}

LayerFlops moe_layer_flops(const ModelSpec& m, const ParallelSpec& p, const MoeLayerJob& job) {
  const double tokens = d(job.routing.tokens_per_gpu);
  const LayerParams lp = layer_params(m, true);
  const auto [dqk, dv] = head_dims(m);
  const double heads = d(m.heads) / d(p.tp);
  // Balanced routing: each GPU's experts receive tokens x top_k token-expert pairs.
  LayerFlops f;
  if (job.attention) {  // the attention part, unless the job leaves it out
    f.fwd = {
        {"attention_projections", 2 * tokens * lp.attention / d(p.tp)},
        {"attention_scores", 2 * heads * (dqk + dv) *
                                 d(attention_pairs(Mask::CausalTopLeft, job.routing.tokens_per_gpu,
                                                   job.routing.tokens_per_gpu))}};
  }
  f.fwd.insert(f.fwd.end(), {{"router", 2 * tokens * lp.router},
                             {"routed_experts", 2 * tokens * d(job.routing.top_k) * lp.expert},
                             {"shared_experts", 2 * tokens * lp.shared_experts}});
  f.bwd = backward_flops(f.fwd);
  return f;
}

EpNumbers ep_numbers(const ModelSpec& m, const MoeLayerJob& job, const topo::Spec& cluster) {
  EpNumbers n;
  const MoeRouting& r = job.routing;
  const double nodes = r.max_nodes_per_token > 0 ? d(r.max_nodes_per_token) : d(r.top_k);
  const double per_copy = d(r.tokens_per_gpu) * nodes * d(m.hidden);
  n.dispatch_bytes_ib = per_copy * job.dispatch_bytes_per_element;
  n.combine_bytes_ib = per_copy * job.combine_bytes_per_element;
  n.fwd_bwd_bytes_ib = 2 * (n.dispatch_bytes_ib + n.combine_bytes_ib);
  n.layer_flops_per_gpu = 2 * active_params(m) / d(m.layers) * d(r.tokens_per_gpu);
  n.compute_s_at_peak = n.layer_flops_per_gpu / (cluster.gpu.peak_bf16_tflops * 1e12);
  n.comm_s_at_nic =
      (n.dispatch_bytes_ib + n.combine_bytes_ib) / cluster.nic.line_rate().bytes_per_s;
  return n;
}

}  // namespace hopsim::work
