// Closed-form work counts for GEMMs, grouped GEMMs and masked attention.
#include "calibrate/core/flops.hpp"

#include <algorithm>

namespace hopsim::calib {
namespace {

std::int64_t triangle(std::int64_t n) {
  return n * (n + 1) / 2;
}

}  // namespace

std::int64_t attn_pairs(std::int64_t s_q, std::int64_t s_kv, Mask mask) {
  if (s_q <= 0 || s_kv <= 0) {
    return 0;
  }
  switch (mask) {
    case Mask::None:
      return s_q * s_kv;
    case Mask::CausalTopLeft:
      // Row i sees keys 0..i, capped at s_kv once i + 1 > s_kv.
      if (s_q <= s_kv) {
        return triangle(s_q);
      }
      return triangle(s_kv) + (s_q - s_kv) * s_kv;
    case Mask::CausalBottomRight: {
      // The diagonal ends in the bottom-right corner: row i sees keys 0..(s_kv − s_q + i).
      const std::int64_t offset = s_kv - s_q;
      if (offset >= 0) {
        return s_q * offset + triangle(s_q);
      }
      return triangle(s_kv);  // the first −offset rows see nothing
    }
  }
  return 0;
}

double gemm_flops(double m, double n, double k) {
  return 2.0 * m * n * k;
}

double grouped_gemm_flops(double experts, double tokens_per_expert, double n, double k) {
  return 2.0 * experts * tokens_per_expert * n * k;
}

double attn_fwd_flops(double bh, std::int64_t d_qk, std::int64_t d_v, std::int64_t s_q,
                      std::int64_t s_kv, Mask mask) {
  return 2.0 * bh * static_cast<double>(d_qk + d_v) *
         static_cast<double>(attn_pairs(s_q, s_kv, mask));
}

double attn_bwd_flops(double bh, std::int64_t d_qk, std::int64_t d_v, std::int64_t s_q,
                      std::int64_t s_kv, Mask mask) {
  return 2.5 * attn_fwd_flops(bh, d_qk, d_v, s_q, s_kv, mask);
}

int dtype_bytes(Dtype dtype) {
  return dtype == Dtype::Fp8 ? 1 : 2;
}

double gemm_min_bytes(double m, double n, double k, Dtype dtype) {
  return (m * k + n * k) * dtype_bytes(dtype) + m * n * 2.0;
}

namespace {

/// Element counts of Q, K, V, O and the stats bytes of one attention call.
struct AttnElems {
  double q, k, v, o, stats_bytes;
};

AttnElems attn_elems(double bh, std::int64_t gqa, std::int64_t d_qk, std::int64_t d_v,
                     std::int64_t s_q, std::int64_t s_kv) {
  const double g = static_cast<double>(std::max<std::int64_t>(gqa, 1));
  return {bh * static_cast<double>(s_q * d_qk), bh / g * static_cast<double>(s_kv * d_qk),
          bh / g * static_cast<double>(s_kv * d_v), bh * static_cast<double>(s_q * d_v),
          bh * static_cast<double>(s_q) * 4.0};
}

}  // namespace

double attn_fwd_min_bytes(double bh, std::int64_t gqa, std::int64_t d_qk, std::int64_t d_v,
                          std::int64_t s_q, std::int64_t s_kv) {
  const AttnElems e = attn_elems(bh, gqa, d_qk, d_v, s_q, s_kv);
  return 2.0 * (e.q + e.k + e.v + e.o) + e.stats_bytes;
}

double attn_bwd_min_bytes(double bh, std::int64_t gqa, std::int64_t d_qk, std::int64_t d_v,
                          std::int64_t s_q, std::int64_t s_kv) {
  const AttnElems e = attn_elems(bh, gqa, d_qk, d_v, s_q, s_kv);
  return 2.0 * (e.q + e.k + e.v + 2.0 * e.o) + e.stats_bytes + 2.0 * (e.q + e.k + e.v);
}

}  // namespace hopsim::calib
