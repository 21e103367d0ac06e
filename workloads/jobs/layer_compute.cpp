// Kernel shapes of attention and MoE layers, priced by the compute model.
#include "workloads/jobs/layer_compute.hpp"

namespace hopsim::work {
namespace {

struct Gemm {
  std::string name;
  std::int64_t m, n, k;
};

// Each GEMM forward and backward; attention calls are added by the caller.
void add_gemms(const std::vector<Gemm>& gemms, Dtype dtype, const ComputeModel& model,
               LayerCosts& out) {
  for (const Gemm& g : gemms) {
    out.fwd.emplace_back(g.name, model.gemm(dtype, g.m, g.n, g.k, Pass::Fwd));
    out.bwd.emplace_back(g.name, model.gemm(dtype, g.m, g.n, g.k, Pass::Bwd));
  }
}

// Sums the costs of `calls` into one entry (several kernel launches of one operation).
ComputeCost sum(const std::vector<ComputeCost>& calls) {
  ComputeCost total;
  total.source = Source::Exact;
  for (const ComputeCost& c : calls) {
    total.time += c.time;
    total.flops.n += c.flops.n;
    total.bytes = total.bytes + c.bytes;
    total.source = std::max(total.source, c.source);  // the worst source of the parts
  }
  return total;
}

void add_attention(const std::vector<AttentionShape>& calls, const ComputeModel& model,
                   LayerCosts& out) {
  std::vector<ComputeCost> fwd;
  std::vector<ComputeCost> bwd;
  for (const AttentionShape& s : calls) {
    fwd.push_back(model.attention(Dtype::Bf16, s, Pass::Fwd));
    bwd.push_back(model.attention(Dtype::Bf16, s, Pass::Bwd));
  }
  out.fwd.emplace_back("attention", sum(fwd));
  out.bwd.emplace_back("attention", sum(bwd));
}

}  // namespace

LayerCosts attention_layer_costs(const ModelSpec& m, const ParallelSpec& p,
                                 const AttentionLayerJob& job, const ComputeModel& model) {
  const std::int64_t tokens = job.seq_len * job.micro_batch / p.cp;
  const std::int64_t q_width = m.heads * m.head_dim / p.tp;
  const std::int64_t kv_width = std::max<std::int64_t>(1, m.kv_heads / p.tp) * m.head_dim;
  LayerCosts out;
  add_gemms({{"qkv_projection", tokens, q_width + 2 * kv_width, m.hidden}}, Dtype::Bf16, model,
            out);
  AttentionShape block;
  block.d_qk = m.head_dim;
  block.d_v = m.head_dim;
  block.gqa = m.heads / m.kv_heads;
  block.bh = job.micro_batch * m.heads / p.tp;
  std::vector<AttentionShape> calls;
  if (p.cp == 1) {
    block.mask = job.mask != AttentionMask::Full ? Mask::CausalTopLeft : Mask::None;
    block.s_q = block.s_kv = job.seq_len;
    calls.push_back(block);
  } else {
    const std::int64_t k = job.seq_len / (2 * p.cp);
    block.mask = job.mask != AttentionMask::Full ? Mask::CausalTopLeft : Mask::None;
    block.s_q = block.s_kv = 2 * k;
    calls.push_back(block);
    block.mask = Mask::None;
    block.s_q = k;
    block.s_kv = 2 * k;
    calls.insert(calls.end(), static_cast<std::size_t>(p.cp - 1), block);
  }
  add_attention(calls, model, out);
  add_gemms({{"output_projection", tokens, m.hidden, q_width},
             {"mlp_gate_up", tokens, 2 * m.ffn_hidden / p.tp, m.hidden},
             {"mlp_down", tokens, m.hidden, m.ffn_hidden / p.tp}},
            Dtype::Bf16, model, out);
  return out;
}

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

}  // namespace hopsim::work
