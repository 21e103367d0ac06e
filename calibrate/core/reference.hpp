// FP64 CPU references for the correctness checks: attention forward/backward, TN GEMM and a row
// softmax, and the comparison that judges a result against one.
//
// Tensors are dense row-major BHSD: Q [b, h_q, s_q, d_qk], K [b, h_k, s_kv, d_qk],
// V [b, h_k, s_kv, d_v], O/dO [b, h_q, s_q, d_v]; query head h reads KV head h / (h_q / h_k).
// Forward: S = scale·Q·Kᵀ, masked entries −∞, P = softmax(S) per row, O = P·V,
// stats = max + log Σ exp(S − max) (natural log; what cuDNN's Stats output holds).
// Backward: dV = Pᵀ·dO, dP = dO·Vᵀ, dS = P ∘ (dP − rowsum(dO ∘ O)), dQ = scale·dS·K,
// dK = scale·dSᵀ·Q (GQA: summed over the query heads of a group).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/core/types.hpp"

namespace hopsim::calib {

struct AttnShape {
  std::int64_t b = 1;
  std::int64_t h_q = 1;
  std::int64_t h_k = 1;
  std::int64_t s_q = 1;
  std::int64_t s_kv = 1;
  std::int64_t d_qk = 64;
  std::int64_t d_v = 64;
  Mask mask = Mask::None;
  double scale = 0.125;
};

/// True when query row i may attend key j under `mask` (see flops.hpp for the alignments).
bool attends(Mask mask, std::int64_t s_q, std::int64_t s_kv, std::int64_t i, std::int64_t j);

struct AttnForward {
  std::vector<double> o;      ///< [b, h_q, s_q, d_v]; rows with no visible key are 0
  std::vector<double> stats;  ///< [b, h_q, s_q]
};

struct AttnGrads {
  std::vector<double> dq;
  std::vector<double> dk;
  std::vector<double> dv;
};

AttnForward attn_forward_reference(const AttnShape& s, const std::vector<double>& q,
                                   const std::vector<double>& k, const std::vector<double>& v);

AttnGrads attn_backward_reference(const AttnShape& s, const std::vector<double>& q,
                                  const std::vector<double>& k, const std::vector<double>& v,
                                  const std::vector<double>& d_o);

/// C[M, N] = A[M, K] · B[N, K]ᵀ, all row-major (the "TN" GEMM of the harness).
std::vector<double> gemm_tn_reference(std::int64_t m, std::int64_t n, std::int64_t k,
                                      const std::vector<double>& a, const std::vector<double>& b);

struct ErrorStats {
  double max_abs = 0.0;   ///< max |got − want|
  double max_want = 0.0;  ///< max |want|
  double rel = 0.0;       ///< max_abs / max(max_want, tiny)
  bool finite = true;     ///< no NaN/Inf in got
};

/// Throws CalibError when sizes differ.
ErrorStats compare(const std::vector<double>& got, const std::vector<double>& want);

/// Row `r` of `x` (rows of `w`) through a softmax, shifted by the row's maximum.
std::vector<double> softmax_row(const std::vector<double>& x, std::size_t r, std::size_t w);

/// Appends the comparison of `got` with `want` to `detail` (max |got − want| / max |want|);
/// false when out of tolerance or not finite.
bool judge(const std::string& what, const std::vector<double>& got, const std::vector<double>& want,
           double tolerance, std::string& detail);

}  // namespace hopsim::calib
