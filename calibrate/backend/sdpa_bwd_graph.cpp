// The backward composite SDPA graph (see sdpa_graph.hpp for the maths and layouts).
#include "calibrate/backend/sdpa_graph.hpp"

namespace hopsim::calib {
namespace {

/// The transposed view of a tensor: last two dims and strides swapped.
std::pair<Dims, Dims> transposed(Dims dims, Dims strides) {
  std::swap(dims[2], dims[3]);
  std::swap(strides[2], strides[3]);
  return {dims, strides};
}

/// Device tensors: Q, Kᵀ, Vᵀ, O, dO, Stats in; dQ, dK, dV out.
void add_io(GraphBuilder& g, const SdpaShape& s, SdpaBwdGraph& r) {
  const Dims k_strides = bshd_strides(s.h_k, s.s_kv, s.d_qk);
  const Dims v_strides = bshd_strides(s.h_k, s.s_kv, s.d_v);
  const auto [kt_dims, kt_strides] = transposed({s.b, s.h_k, s.s_kv, s.d_qk}, k_strides);
  const auto [vt_dims, vt_strides] = transposed({s.b, s.h_k, s.s_kv, s.d_v}, v_strides);
  const Dims q_strides = bshd_strides(s.h_q, s.s_q, s.d_qk);
  const Dims o_strides = bshd_strides(s.h_q, s.s_q, s.d_v);
  r.q = g.tensor({s.b, s.h_q, s.s_q, s.d_qk}, q_strides, CUDNN_DATA_BFLOAT16);
  r.k = g.tensor(kt_dims, kt_strides, CUDNN_DATA_BFLOAT16);
  r.v = g.tensor(vt_dims, vt_strides, CUDNN_DATA_BFLOAT16);
  r.o = g.tensor({s.b, s.h_q, s.s_q, s.d_v}, o_strides, CUDNN_DATA_BFLOAT16);
  r.d_o = g.tensor({s.b, s.h_q, s.s_q, s.d_v}, o_strides, CUDNN_DATA_BFLOAT16);
  const Dims row_dims{s.b, s.h_q, s.s_q, 1};
  r.stats = g.tensor(row_dims, packed_strides(row_dims), CUDNN_DATA_FLOAT);
  r.dq = g.tensor({s.b, s.h_q, s.s_q, s.d_qk}, q_strides, CUDNN_DATA_BFLOAT16);
  r.dk = g.tensor({s.b, s.h_k, s.s_kv, s.d_qk}, k_strides, CUDNN_DATA_BFLOAT16);
  r.dv = g.tensor({s.b, s.h_k, s.s_kv, s.d_v}, v_strides, CUDNN_DATA_BFLOAT16);
}

/// Σ = rowsum(dO ∘ O), materialised in an FP32 workspace tensor.
void add_softmax_sum(GraphBuilder& g, const SdpaShape& s, SdpaBwdGraph& r) {
  const std::int64_t do_o = g.virtual_tensor({s.b, s.h_q, s.s_q, s.d_v}, CUDNN_DATA_FLOAT);
  g.binary(CUDNN_POINTWISE_MUL, r.d_o, r.o, do_o);
  const Dims row_dims{s.b, s.h_q, s.s_q, 1};
  const std::int64_t row_sum = g.virtual_tensor(row_dims, CUDNN_DATA_FLOAT);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, do_o, row_sum);
  r.softmax_sum = g.tensor(row_dims, packed_strides(row_dims), CUDNN_DATA_FLOAT);
  g.binary(CUDNN_POINTWISE_MUL, row_sum, g.scalar_float(1.0F), r.softmax_sum);
}

/// dX = Aᵀ·B per query head; with GQA the per-head results are summed over the group into the
/// real output `out` (h_k heads).
void grad_matmul(GraphBuilder& g, std::int64_t a_t, std::int64_t b, std::int64_t out,
                 const SdpaShape& s, std::int64_t d) {
  if (s.h_q == s.h_k) {
    g.matmul(a_t, b, out);
    return;
  }
  const std::int64_t full = g.virtual_tensor({s.b, s.h_q, s.s_kv, d}, CUDNN_DATA_BFLOAT16);
  g.matmul(a_t, b, full);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, out);
}

/// The BF16 transposed view [b, h_q, s_kv, s_q] of a score-shaped tensor.
std::int64_t scores_transposed(GraphBuilder& g, const SdpaShape& s, std::int64_t scores) {
  const std::int64_t t = g.virtual_tensor({s.b, s.h_q, s.s_kv, s.s_q}, CUDNN_DATA_BFLOAT16,
                                          {s.h_q * s.s_q * s.s_kv, s.s_q * s.s_kv, 1, s.s_kv});
  g.reshape(scores, t);
  return t;
}

}  // namespace

SdpaBwdGraph build_sdpa_bwd(const SdpaShape& shape, cudnnHandle_t handle) {
  shape.validate();
  SdpaBwdGraph r;
  GraphBuilder& g = r.builder;
  const SdpaShape& s = shape;
  add_io(g, s, r);
  add_softmax_sum(g, s, r);

  // P = exp(S·scale − Stats), masked.
  const Dims score_dims{s.b, s.h_q, s.s_q, s.s_kv};
  const std::int64_t scores = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.matmul(r.q, r.k, scores);
  const std::int64_t scaled = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  const std::int64_t scale = g.scalar_float(s.scale);
  g.binary(CUDNN_POINTWISE_MUL, scores, scale, scaled);
  const std::int64_t centered = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.binary(CUDNN_POINTWISE_SUB, scaled, r.stats, centered);
  const std::int64_t masked = apply_mask(g, centered, s);
  const std::int64_t p = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.unary(CUDNN_POINTWISE_EXP, masked, p);

  // dV = Pᵀ·dO.
  grad_matmul(g, scores_transposed(g, s, p), r.d_o, r.dv, s, s.d_v);

  // dS = P ∘ (dO·Vᵀ − Σ) · scale.
  const std::int64_t dp = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.matmul(r.d_o, r.v, dp);
  const std::int64_t dp_centered = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.binary(CUDNN_POINTWISE_SUB, dp, r.softmax_sum, dp_centered);
  const std::int64_t ds_unscaled = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.binary(CUDNN_POINTWISE_MUL, dp_centered, p, ds_unscaled);
  const std::int64_t ds = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.binary(CUDNN_POINTWISE_MUL, ds_unscaled, scale, ds);

  // dK = dSᵀ·Q.
  grad_matmul(g, scores_transposed(g, s, ds), r.q, r.dk, s, s.d_qk);

  // dQ = dS·K through an FP32 accumulator (workspace), converted by an identity op.
  const std::int64_t k_plain = g.virtual_tensor({s.b, s.h_k, s.s_kv, s.d_qk}, CUDNN_DATA_BFLOAT16,
                                                bshd_strides(s.h_k, s.s_kv, s.d_qk));
  g.reshape(r.k, k_plain);
  const Dims dq_dims{s.b, s.h_q, s.s_q, s.d_qk};
  r.dq_accum = g.tensor(dq_dims, packed_strides(dq_dims), CUDNN_DATA_FLOAT);
  g.matmul(ds, k_plain, r.dq_accum);
  g.unary(CUDNN_POINTWISE_IDENTITY, r.dq_accum, r.dq);

  r.graph = g.build(handle);
  return r;
}

}  // namespace hopsim::calib
