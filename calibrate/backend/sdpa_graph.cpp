// The forward composite SDPA graph, the shared mask subgraph and shape helpers.
#include "calibrate/backend/sdpa_graph.hpp"

#include <limits>

#include <fmt/format.h>

namespace hopsim::calib {

void SdpaShape::validate() const {
  if (b < 1 || h_q < 1 || h_k < 1 || h_q % h_k != 0) {
    throw CalibError(
        fmt::format("SDPA {}: need b, h_q, h_k >= 1 and h_k dividing h_q", describe()));
  }
  if (s_q < 1 || s_kv < 1 || d_qk < 8 || d_v < 8 || d_qk > 256 || d_v > 256 || d_qk % 8 != 0 ||
      d_v % 8 != 0) {
    throw CalibError(fmt::format("SDPA {}: unsupported sizes", describe()));
  }
}

std::string SdpaShape::describe() const {
  return fmt::format("b={} h_q={} h_k={} s_q={} s_kv={} d_qk={} d_v={} mask={}", b, h_q, h_k, s_q,
                     s_kv, d_qk, d_v, to_string(mask));
}

std::int64_t q_elems(const SdpaShape& s) {
  return s.b * s.h_q * s.s_q * s.d_qk;
}

std::int64_t kv_elems(const SdpaShape& s, std::int64_t d) {
  return s.b * s.h_k * s.s_kv * d;
}

std::int64_t o_elems(const SdpaShape& s) {
  return s.b * s.h_q * s.s_q * s.d_v;
}

Dims bshd_strides(std::int64_t h, std::int64_t s, std::int64_t d) {
  return {s * h * d, d, h * d, 1};
}

std::int64_t apply_mask(GraphBuilder& g, std::int64_t s, const SdpaShape& shape) {
  if (shape.mask == Mask::None) {
    return s;
  }
  const Dims dims = g.info(s).dims;
  std::int64_t row = g.virtual_tensor(dims, CUDNN_DATA_INT32);
  g.gen_index(s, row, 2);
  const std::int64_t col = g.virtual_tensor(dims, CUDNN_DATA_INT32);
  g.gen_index(s, col, 3);
  if (shape.mask == Mask::CausalBottomRight) {
    // Shift the diagonal to end in the bottom-right corner: row + s_kv − s_q.
    const std::int64_t plus = g.virtual_tensor(dims, CUDNN_DATA_INT32);
    g.binary(CUDNN_POINTWISE_ADD, row, g.scalar_int32(static_cast<std::int32_t>(shape.s_kv)), plus,
             CUDNN_DATA_INT32);
    const std::int64_t shifted = g.virtual_tensor(dims, CUDNN_DATA_INT32);
    g.binary(CUDNN_POINTWISE_SUB, plus, g.scalar_int32(static_cast<std::int32_t>(shape.s_q)),
             shifted, CUDNN_DATA_INT32);
    row = shifted;
  }
  const std::int64_t keep = g.virtual_tensor(dims, CUDNN_DATA_BOOLEAN);
  g.binary(CUDNN_POINTWISE_CMP_GE, row, col, keep, CUDNN_DATA_BOOLEAN);
  const std::int64_t masked = g.virtual_tensor(dims, CUDNN_DATA_FLOAT);
  g.select(s, g.scalar_float(std::numeric_limits<float>::lowest()), keep, masked);
  return masked;
}

SdpaFwdGraph build_sdpa_fwd(const SdpaShape& shape, cudnnHandle_t handle) {
  shape.validate();
  SdpaFwdGraph r;
  GraphBuilder& g = r.builder;
  const auto& [b, h_q, h_k, s_q, s_kv, d_qk, d_v, mask, scale] = shape;
  r.q = g.tensor({b, h_q, s_q, d_qk}, bshd_strides(h_q, s_q, d_qk), CUDNN_DATA_BFLOAT16);
  // Kᵀ: the K tensor with its last two dims and strides swapped.
  const Dims ks = bshd_strides(h_k, s_kv, d_qk);
  r.k = g.tensor({b, h_k, d_qk, s_kv}, {ks[0], ks[1], ks[3], ks[2]}, CUDNN_DATA_BFLOAT16);
  r.v = g.tensor({b, h_k, s_kv, d_v}, bshd_strides(h_k, s_kv, d_v), CUDNN_DATA_BFLOAT16);
  r.o = g.tensor({b, h_q, s_q, d_v}, bshd_strides(h_q, s_q, d_v), CUDNN_DATA_BFLOAT16);
  const Dims row_dims{b, h_q, s_q, 1};
  r.stats = g.tensor(row_dims, packed_strides(row_dims), CUDNN_DATA_FLOAT);

  const Dims score_dims{b, h_q, s_q, s_kv};
  const std::int64_t s = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.matmul(r.q, r.k, s);
  const std::int64_t scaled = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.binary(CUDNN_POINTWISE_MUL, s, g.scalar_float(scale), scaled);
  const std::int64_t masked = apply_mask(g, scaled, shape);

  // Softmax with stats: max, x − max, exp, Σ, log Σ, max + log Σ → Stats, exp / Σ → P.
  const std::int64_t row_max = g.virtual_tensor(row_dims, CUDNN_DATA_FLOAT);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, masked, row_max);
  const std::int64_t centered = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.binary(CUDNN_POINTWISE_SUB, masked, row_max, centered);
  const std::int64_t e = g.virtual_tensor(score_dims, CUDNN_DATA_FLOAT);
  g.unary(CUDNN_POINTWISE_EXP, centered, e);
  const std::int64_t sum = g.virtual_tensor(row_dims, CUDNN_DATA_FLOAT);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  const std::int64_t log_sum = g.virtual_tensor(row_dims, CUDNN_DATA_FLOAT);
  g.unary(CUDNN_POINTWISE_LOG, sum, log_sum);
  g.binary(CUDNN_POINTWISE_ADD, row_max, log_sum, r.stats);
  // P feeds the second matmul, whose A operand must be in the IO type.
  const std::int64_t p = g.virtual_tensor(score_dims, CUDNN_DATA_BFLOAT16);
  g.binary(CUDNN_POINTWISE_DIV, e, sum, p);
  g.matmul(p, r.v, r.o);

  r.graph = g.build(handle);
  return r;
}

}  // namespace hopsim::calib
