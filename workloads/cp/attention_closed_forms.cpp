// Closed forms and kernel costs of the attention layer.
#include "workloads/cp/attention_closed_forms.hpp"

#include <algorithm>
#include <numeric>

#include "sim/int_math.hpp"
#include "workloads/costs/layer_kernels.hpp"
#include "workloads/cp/cp_te_merge.hpp"
#include "workloads/cp/cp_torch.hpp"

namespace hopsim::work {

AttentionLayerKernels attention_layer_kernels(const ModelSpec& m, const ParallelSpec& p,
                                              const AttentionLayerJob& job,
                                              const ComputeModel& model) {
  const AttentionDims dm = job.dims(m, p);
  const LayerParams lp = layer_params(m, false);
  const std::int64_t sp_tokens = dm.tokens / p.tp;  // sequence parallelism
  // QKV (MLA: every projection before attention) as one GEMM of the same weights.
  const auto qkv_n = static_cast<std::int64_t>((lp.attention - d(m.heads * dm.d_v * m.hidden)) /
                                               d(m.hidden) / d(p.tp));
  AttentionLayerKernels k;
  add_memory("attention_norm", KernelClass::Norm, norm_bytes(sp_tokens, m.hidden), model, k.before);
  // DeepSeek's FP8 recipe: MLA's projections each their own FP8 GEMM.
  const bool mla_fp8 = mla_projections_in_fp8(m, model);
  const MlaProjections mla = mla_fp8 ? mla_projections(m, dm.tokens, p.tp) : MlaProjections{};
  if (mla_fp8) {
    add_gemms(mla.before, Dtype::Fp8, model, k.before);
  } else {
    add_gemms({{"qkv_projection", dm.tokens, qkv_n, m.hidden}}, job.dtype, model, k.before);
  }
  add_memory("rotary", KernelClass::Rotary,
             rotary_bytes(dm.tokens, rotary_width(m, dm.q_heads, dm.kv_heads)), model, k.before);
  add_mla_kernels(m, dm.tokens, dm.q_heads, model, k.before);
  add_memory("attention_bwd_prep", KernelClass::AttentionBwdPrep,
             attention_bwd_prep_bytes(dm.tokens, dm.q_heads, dm.d_qk, dm.d_v), model, k.after);
  if (mla_fp8) {
    add_gemms(mla.after, Dtype::Fp8, model, k.after);
  } else {
    add_gemms({{"output_projection", dm.tokens, m.hidden, m.heads * dm.d_v / p.tp}}, job.dtype,
              model, k.after);
  }
  add_memory("attention_residual", KernelClass::Residual, residual_bytes(sp_tokens, m.hidden),
             model, k.after);
  if (job.mlp) {
    const std::int64_t ffn = m.ffn_hidden / p.tp;
    add_memory("mlp_norm", KernelClass::Norm, norm_bytes(sp_tokens, m.hidden), model, k.mlp);
    add_gemms({{"mlp_gate_up", dm.tokens, 2 * ffn, m.hidden}}, job.mlp_dtype, model, k.mlp);
    add_memory("swiglu", KernelClass::SwiGlu, swiglu_bytes(dm.tokens, ffn), model, k.mlp);
    add_gemms({{"mlp_down", dm.tokens, m.hidden, ffn}}, job.mlp_dtype, model, k.mlp);
    add_memory("mlp_residual", KernelClass::Residual, residual_bytes(sp_tokens, m.hidden), model,
               k.mlp);
  }
  return k;
}

LayerCosts attention_layer_costs(const ModelSpec& m, const ParallelSpec& p,
                                 const AttentionLayerJob& job, const ComputeModel& model,
                                 std::uint64_t seed) {
  const AttentionDims dims = job.dims(m, p);
  const CpLayout layout = job.layout(p.cp, seed);
  AttentionShape shape;
  shape.d_qk = dims.d_qk;
  shape.d_v = dims.d_v;
  shape.gqa = std::max<std::int64_t>(1, dims.attn_q_heads / dims.attn_kv_heads);
  shape.bh = job.micro_batch * dims.attn_q_heads;
  // Ring position 0's calls, as the simulation runs them (its algorithm's row says which).
  std::vector<AttentionShape> calls;
  const bool torch = job.cp.impl == CpImpl::Torch;
  for (const AttentionCall& c : torch ? torch_position_calls(layout, 0, job.mask)
                                      : cp_algorithm_row(job.cp.algorithm).calls(layout, 0)) {
    shape.s_q = c.s_q;
    shape.s_kv = c.s_kv;
    shape.mask = c.mask;
    calls.push_back(shape);
  }
  const AttentionLayerKernels k = attention_layer_kernels(m, p, job, model);
  LayerCosts out = k.before;
  add_attention(calls, job.kernel_dtype(), model, out);
  if (torch) {  // the two entries add_attention appended: SDPA's rate
    out.fwd.back().second = torch_sdpa(out.fwd.back().second);
    out.bwd.back().second = torch_sdpa(out.bwd.back().second);
  }
  if (te_pass_kv_ring(job, dims)) {  // Transformer Engine's merges, ring position 0's
    const TeMergeBytes merge =
        te_merge_bytes(te_merge_shape(job, dims, layout), 0, static_cast<int>(dims.r));
    const Bytes pack{te_kv_pack_bytes(job, dims, layout)};
    const std::int64_t sums =
        std::accumulate(merge.bwd_step.begin(), merge.bwd_step.end(), std::int64_t{0});
    add_memory("cp_kv_pack", KernelClass::Copy, {pack, pack}, model, out);
    add_memory("cp_merge", KernelClass::Copy, {Bytes{merge.fwd_merge}, Bytes{}}, model, out);
    add_memory("cp_dq_dkv_sum", KernelClass::Copy, {Bytes{}, Bytes{sums}}, model, out);
  }
  for (const LayerCosts* part : {&k.after, &k.mlp}) {
    out.fwd.insert(out.fwd.end(), part->fwd.begin(), part->fwd.end());
    out.bwd.insert(out.bwd.end(), part->bwd.begin(), part->bwd.end());
  }
  return out;
}

LayerFlops attention_layer_flops(const ModelSpec& m, const ParallelSpec& p,
                                 const AttentionLayerJob& job) {
  const double tokens = d(job.seq_len) * d(job.micro_batch) / d(p.cp);
  const LayerParams lp = layer_params(m, false);
  const auto [dqk, dv] = head_dims(m);
  // With 2*cp chunks paired i and 2cp-1-i, every rank does 1/cp of the whole causal work.
  const double pairs =
      d(attention_pairs(job.mask != AttentionMask::Full ? Mask::CausalTopLeft : Mask::None,
                        job.seq_len, job.seq_len)) /
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
  n.contiguous_work_ratio = c;           // rank c-1 attends c blocks, rank 0 one
  n.contiguous_flops_ratio = 2 * c - 1;  // (c-1 + 1/2) / (1/2)
  // (i + 1) + (2c - i); over one position a zigzag is one chunk, one unit (cp_layout.hpp)
  n.zigzag_units_per_rank = c > 1 ? 2 * c + 1 : 1;
  return n;
}

}  // namespace hopsim::work
