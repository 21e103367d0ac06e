// Closed forms and kernel costs of the MoE layer.
#include "workloads/ep/moe_closed_forms.hpp"

#include <tuple>

namespace hopsim::work {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

LayerCosts moe_attention_costs(const ModelSpec& m, const ParallelSpec& p, std::int64_t tokens,
                               std::int64_t keys_before, bool attention,
                               const ComputeModel& model) {
  const LayerParams lp = layer_params(m, true);
  LayerCosts out;
  if (attention) {
    // MLA's projections as one GEMM of the same FLOPs: tokens x hidden x (weights / hidden).
    const auto width = static_cast<std::int64_t>(lp.attention / static_cast<double>(m.hidden));
    add_gemms({{"attention_projections", tokens, width / p.tp, m.hidden}}, Dtype::Bf16, model,
              out);
    AttentionShape self;
    self.d_qk = m.mla ? m.mla_shape.qk_nope_head_dim + m.mla_shape.qk_rope_head_dim : m.head_dim;
    self.d_v = m.mla ? m.mla_shape.v_head_dim : m.head_dim;
    self.mask = keys_before > 0 ? Mask::CausalBottomRight : Mask::CausalTopLeft;
    self.s_q = tokens;
    self.s_kv = keys_before + tokens;
    self.bh = m.heads / p.tp;
    add_attention({self}, model, out);
  }
  add_gemms({{"router", tokens, m.moe.routed_experts, m.hidden}}, Dtype::Bf16, model, out);
  return out;
}

LayerCosts moe_expert_costs(const ModelSpec& m, const ParallelSpec& p,
                            std::int64_t tokens_per_expert, const ComputeModel& model,
                            std::int64_t local_experts) {
  const std::int64_t local = local_experts > 0 ? local_experts : m.moe.routed_experts / p.ep;
  const std::int64_t ffn = m.moe.expert_ffn_hidden;
  LayerCosts out;
  for (const auto& [name, n, k] : {std::tuple{"experts_gate_up", 2 * ffn, m.hidden},
                                   std::tuple{"experts_down", m.hidden, ffn}}) {
    out.fwd.emplace_back(name,
                         model.grouped_gemm(Dtype::Fp8, local, tokens_per_expert, n, k, Pass::Fwd));
    out.bwd.emplace_back(name,
                         model.grouped_gemm(Dtype::Fp8, local, tokens_per_expert, n, k, Pass::Bwd));
  }
  return out;
}

LayerCosts moe_shared_costs(const ModelSpec& m, std::int64_t tokens, const ComputeModel& model) {
  LayerCosts out;
  const std::int64_t ffn = m.moe.expert_ffn_hidden;
  if (m.moe.shared_experts > 0) {
    add_gemms({{"shared_gate_up", tokens, 2 * ffn * m.moe.shared_experts, m.hidden},
               {"shared_down", tokens, m.hidden, ffn * m.moe.shared_experts}},
              Dtype::Fp8, model, out);
  }
  return out;
}

LayerCosts moe_layer_costs(const ModelSpec& m, const ParallelSpec& p, const MoeLayerJob& job,
                           const ComputeModel& model) {
  const std::int64_t tokens = job.routing.tokens_per_gpu;
  LayerCosts out = moe_attention_costs(m, p, tokens, 0, job.attention, model);
  // Balanced routing: the GPU's experts receive tokens x top_k rows in all.
  const std::int64_t local = m.moe.routed_experts / p.ep;
  for (const LayerCosts& part : {moe_expert_costs(m, p, tokens * job.routing.top_k / local, model),
                                 moe_shared_costs(m, tokens, model)}) {
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
    f.fwd = {{"attention_projections", 2 * tokens * lp.attention / d(p.tp)},
             {"attention_scores",
              2 * heads * (dqk + dv) *
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
  n.comm_s_at_nic = (n.dispatch_bytes_ib + n.combine_bytes_ib) /
                    cluster.nic.line_rate().bytes_per_s;
  return n;
}

}  // namespace hopsim::work
