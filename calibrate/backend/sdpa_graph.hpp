// cuDNN backend "composite" SDPA graphs (calibrate/README.md, "What it measures"), the pattern the fused flash
// attention engines match, as the cuDNN frontend expands its SDPA nodes for cuDNN < 9.21:
//
// forward:  S = Q·Kᵀ (FP32) → ·scale → mask → max, sub, exp, sum, log, add → Stats (FP32 out),
//           P = exp / sum (BF16) → O = P·V
// backward: Σ = rowsum(dO ∘ O) (FP32 workspace); S = Q·Kᵀ·scale − Stats → mask → P = exp;
//           dV = Pᵀ·dO; dS = P ∘ (dO·Vᵀ − Σ)·scale; dK = dSᵀ·Q; dQ = dS·K via an FP32
//           accumulator (workspace) and an identity op. GQA: dK/dV are computed per query head
//           and summed over the group by a reduction.
// Masks: causal_top_left keeps row ≥ col; causal_bottom_right keeps row + s_kv − s_q ≥ col;
// masked scores become the lowest float. Layout BSHD: Q [b, s_q, h_q, d] in memory, described
// as dims [b, h, s, d] with strides [s·h·d, d, h·d, 1]; Stats [b, h_q, s_q, 1] packed.
// Building and finalizing these graphs needs no device; plans do.
#pragma once

#include <cstdint>

#include "calibrate/backend/cudnn_desc.hpp"
#include "calibrate/core/types.hpp"

namespace hopsim::calib {

struct SdpaShape {
  std::int64_t b = 1;
  std::int64_t h_q = 1;
  std::int64_t h_k = 1;
  std::int64_t s_q = 128;
  std::int64_t s_kv = 128;
  std::int64_t d_qk = 128;
  std::int64_t d_v = 128;
  Mask mask = Mask::None;
  float scale = 0.088388F;  ///< 1/√128

  /// Throws CalibError for shapes cuDNN cannot take (h_q % h_k, d > 256, odd sizes).
  void validate() const;
  std::string describe() const;
};

/// Element counts of the BSHD tensors.
std::int64_t q_elems(const SdpaShape& s);
std::int64_t kv_elems(const SdpaShape& s, std::int64_t d);
std::int64_t o_elems(const SdpaShape& s);

/// BSHD strides of a [b, h, s, d] tensor.
Dims bshd_strides(std::int64_t h, std::int64_t s, std::int64_t d);

struct SdpaFwdGraph {
  GraphBuilder builder;
  BackendDesc graph;
  std::int64_t q = 0, k = 0, v = 0, o = 0, stats = 0;
};

struct SdpaBwdGraph {
  GraphBuilder builder;
  BackendDesc graph;
  std::int64_t q = 0, k = 0, v = 0, o = 0, d_o = 0, stats = 0;
  std::int64_t dq = 0, dk = 0, dv = 0;
  std::int64_t softmax_sum = 0;  ///< FP32 [b, h_q, s_q, 1] workspace tensor
  std::int64_t dq_accum = 0;     ///< FP32 [b, h_q, s_q, d_qk] workspace tensor
};

/// `handle` may be null (graph finalize without a device, for tests).
SdpaFwdGraph build_sdpa_fwd(const SdpaShape& shape, cudnnHandle_t handle);
SdpaBwdGraph build_sdpa_bwd(const SdpaShape& shape, cudnnHandle_t handle);

/// Appends the mask ops of `shape.mask` to scores `s` ([b, h_q, s_q, s_kv] FP32); returns the
/// masked scores (s itself for Mask::None).
std::int64_t apply_mask(GraphBuilder& g, std::int64_t s, const SdpaShape& shape);

}  // namespace hopsim::calib
