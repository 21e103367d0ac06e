// Closed forms and kernel costs of the attention layer.
#include "workloads/cp/attention_closed_forms.hpp"

#include <algorithm>

namespace hopsim::work {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

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

LayerFlops attention_layer_flops(const ModelSpec& m, const ParallelSpec& p,
                                 const AttentionLayerJob& job) {
  const double tokens = d(job.seq_len) * d(job.micro_batch) / d(p.cp);
  const LayerParams lp = layer_params(m, false);
  const auto [dqk, dv] = head_dims(m);
  // With 2*cp chunks paired i and 2cp-1-i, every rank does 1/cp of the whole causal work.
  const double pairs =
      d(attention_pairs(job.mask != AttentionMask::Full ? Mask::CausalTopLeft : Mask::None, job.seq_len, job.seq_len)) /
      d(p.cp);
  const double heads = d(m.heads) / d(p.tp);
  const double out = d(m.heads) * dv * d(m.hidden);  // output projection weights
  LayerFlops f;
  f.fwd = {{"qkv_projection", 2 * tokens * (lp.attention - out) / d(p.tp)},
           {"attention_scores", 2 * d(job.micro_batch) * heads * (dqk + dv) * pairs},
           {"output_projection", 2 * tokens * out / d(p.tp)}};
  if (job.mlp) {  // the layers the job runs: attention, and the dense MLP when it has one
    f.fwd.emplace_back("mlp", 2 * tokens * lp.mlp / d(p.tp));
  }
  f.bwd = backward_flops(f.fwd);
  return f;
}

CpNumbers cp_numbers(const ParallelSpec& p, const topo::Spec& cluster) {
  CpNumbers n;
  const double flops_per_s = cluster.gpu.peak_bf16_tflops * 1e12;
  // A block of t tokens costs ~4 t^2 h d FLOPs and moves ~4 t h d bytes of K and V (BF16):
  // compute hides the transfer when t >= F / B (Ring Attention, arXiv 2310.01889, eq. 3).
  n.block_threshold_nvlink_tokens = flops_per_s / cluster.nvlink.line_rate().bytes_per_s;
  n.block_threshold_network_tokens = flops_per_s / cluster.nic.line_rate().bytes_per_s;
  n.min_seq_per_rank_nvlink = 6 * n.block_threshold_nvlink_tokens;
  n.min_seq_per_rank_network = 6 * n.block_threshold_network_tokens;
  const double c = d(p.cp);
  n.contiguous_work_ratio = c;            // rank c-1 attends c blocks, rank 0 one
  n.contiguous_flops_ratio = 2 * c - 1;   // (c-1 + 1/2) / (1/2)
  n.zigzag_units_per_rank = 2 * c + 1;    // (i + 1) + (2c - i)
  return n;
}

}  // namespace hopsim::work
