// Work counters: the named FLOP formulas of the table schema and minimum HBM bytes per op.
//
// gemm_v1          = 2·m·n·k
// grouped_gemm_v1  = 2·experts·tokens_per_expert·n·k   (tokens_per_expert is the mean)
// attn_fwd_v1      = 2·bh·(d_qk + d_v)·E,  E = attended (query, key) pairs:
//   none                 E = s_q·s_kv
//   causal_top_left      E = Σ_{i<s_q} min(i+1, s_kv)
//   causal_bottom_right  E = Σ_{i<s_q} clamp(s_kv − s_q + i + 1, 0, s_kv)
// attn_bwd_v1      = 2.5 · attn_fwd_v1   (recompute S, dV, dP, dS·K, dSᵀ·Q: 5 matmuls vs 2)
#pragma once

#include <cstdint>

#include "calibrate/core/types.hpp"

namespace hopsim::calib {

/// Attended (query, key) pairs of one head; closed forms of the sums above.
std::int64_t attn_pairs(std::int64_t s_q, std::int64_t s_kv, Mask mask);

double gemm_flops(double m, double n, double k);
double grouped_gemm_flops(double experts, double tokens_per_expert, double n, double k);
double attn_fwd_flops(double bh, std::int64_t d_qk, std::int64_t d_v, std::int64_t s_q,
                      std::int64_t s_kv, Mask mask);
double attn_bwd_flops(double bh, std::int64_t d_qk, std::int64_t d_v, std::int64_t s_q,
                      std::int64_t s_kv, Mask mask);

/// Bytes per element as stored in HBM.
int dtype_bytes(Dtype dtype);

/// Minimum HBM traffic (each operand read once, result written once); BF16 output.
double gemm_min_bytes(double m, double n, double k, Dtype dtype);

/// Minimum HBM traffic of attention with K/V shared by `gqa` query heads (BF16 IO, FP32 stats).
/// Forward reads Q, K, V and writes O and stats; backward reads Q, K, V, O, dO and stats and
/// writes dQ, dK, dV.
double attn_fwd_min_bytes(double bh, std::int64_t gqa, std::int64_t d_qk, std::int64_t d_v,
                          std::int64_t s_q, std::int64_t s_kv);
double attn_bwd_min_bytes(double bh, std::int64_t gqa, std::int64_t d_qk, std::int64_t d_v,
                          std::int64_t s_q, std::int64_t s_kv);

}  // namespace hopsim::calib
