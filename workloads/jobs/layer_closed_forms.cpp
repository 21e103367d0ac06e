// Closed forms of the CP and EP layers.
#include "workloads/jobs/layer_closed_forms.hpp"

#include "workloads/compute/compute_model.hpp"

namespace hopsim::work {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// Per-head dimensions of scores (q.k) and values.
std::pair<double, double> head_dims(const ModelSpec& m) {
  if (m.mla) {
    return {d(m.mla_shape.qk_nope_head_dim + m.mla_shape.qk_rope_head_dim),
            d(m.mla_shape.v_head_dim)};
  }
  return {d(m.head_dim), d(m.head_dim)};
}

OpFlops backward(const OpFlops& fwd) {
  OpFlops bwd;
  for (const auto& [name, flops] : fwd) {
    // GEMMs: data and weight gradients (2x); attention recomputes scores (2.5x).
    bwd.emplace_back(name, flops * (name == "attention_scores" ? 2.5 : 2.0));
  }
  return bwd;
}

}  // namespace

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
  f.bwd = backward(f.fwd);
  return f;
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
  f.bwd = backward(f.fwd);
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
