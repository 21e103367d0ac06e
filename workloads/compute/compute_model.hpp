// The compute model: the time of a GEMM, grouped GEMM or attention kernel on one GPU, from a
// calibration table where it has an answer and from a roofline where it has none.
//
// Work, exactly (the named formulas of calibration tables):
//   gemm_v1          F = 2 m n k
//   grouped_gemm_v1  F = 2 experts tokens_per_expert n k
//   attn_fwd_v1      F = 2 bh (d_qk + d_v) E, with E the attended (query, key) pairs:
//                      none                 s_q s_kv
//                      causal_top_left      sum_{i<s_q} min(i + 1, s_kv)
//                      causal_bottom_right  sum_{i<s_q} clamp(s_kv - s_q + i + 1, 0, s_kv)
//   attn_bwd_v1      F = 2.5 attn_fwd_v1 (FlashAttention-3's convention: the backward pass
//                    recomputes the scores; cuDNN's 2 (3 d_qk + 2 d_v) over 2 (d_qk + d_v) is
//                    the same 2.5 when d_qk = d_v)
// A GEMM's backward pass is two GEMMs of the forward's FLOPs, each asked for by its role:
//   fprop  Y[m x n]  = X[m x k] W[k x n]      the table's (m, n, k)
//   dgrad  dX[m x k] = dY[m x n] W^T          the table's (m, k, n)
//   wgrad  dW[k x n] = X^T dY, over m tokens  the table's (k, n, m), accumulated in FP32
// A grouped GEMM's roles keep the forward's key and point (experts, tokens per expert).
//
// Lookup (docs/compute-model.md). Tables with the query's op, pass and exact key are candidates;
// each answers from its grid, and the best source wins (Exact, then Interpolated, then Clamped;
// the earliest table among equals). Inside a table each cell is a throughput theta = F / time.
// At a grid point the answer is the table's time (Exact). Between grid points log(theta) is
// interpolated multilinearly in log2 of the axes (Interpolated); outside the largest value of
// an axis theta is clamped to the edge, as throughput saturates (Clamped). The time is then
// F / theta, rounded up to the picosecond. Below the smallest value of an axis, or where a
// corner of the enclosing cell has no data, the table has no answer.
// Interpolating log(theta) rather than theta makes the time a power law between grid points, so
// it is monotone wherever the table's own times are. Linear theta is not: a bigger kernel comes
// out faster wherever theta rises more than 1 + ln 2 = 1.69x from one grid point to the next
// (110 of the 300 steps of XLA's H100 GEMM table, 85 of them from 256 or 512).
//
// Roofline, where no table answers: t = launch + max(F / (P eff), B / HBM), B the minimum
// bytes (inputs at the dtype's width, outputs in BF16; a weight gradient read and written in
// FP32; attention's backward twice its forward's), eff the role's efficiency: a GEMM's by its
// output tiles' waves over the SMs (gemm_shape.hpp), attention's by the call's size and the
// workload's kernel (attention_kernel.hpp), whose tables alone answer.
// A GEMM role asks, in order: a bwd table of that role; a bwd table of the whole backward
// (no role), whose time is split evenly, as the two gradients have equal FLOPs; the forward
// table at the role's shape, an FP8 weight gradient divided by fp8_wgrad_ratio; the roofline
// (an FP8 weight gradient at efficiency x fp8_wgrad_ratio).
//
// Memory-bound kernels (norms, casts, SwiGLU, ...; costs/layer_kernels.hpp counts their
// bytes): a `memory` table of the kernel class and pass, its work the bytes (theta a bandwidth);
// else the roofline t = launch + B / (HBM memory_eff), on the cluster's GPU.
//
// A table made on another GPU (TableScaling): each time it answers is scaled by the figure
// that bounds it on the table's GPU. With F the FLOPs, B the roofline's bytes and t the table's
// time, a kernel that reached a larger share of that GPU's peak FLOPs than of its HBM bandwidth
// (F / (t P_table) >= B / (t HBM_table)) scales by P_table / P_cluster (of its dtype), any other
// by HBM_table / HBM_cluster.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "sim/units.hpp"
#include "workloads/compute/attention_kernel.hpp"
#include "workloads/compute/calibration.hpp"
#include "workloads/compute/gemm_shape.hpp"
#include "workloads/compute/kernel_class.hpp"
#include "workloads/compute/source.hpp"

namespace hopsim::work {

// Kernel dimensions the model takes: up to 2^31 (closed forms stay within int64).
inline constexpr std::int64_t kMaxExtent = std::int64_t{1} << 31;
// One kernel call may take at most this long: more is no measurement of a working kernel, and
// a plan of such calls would overflow simulated time.
inline constexpr double kMaxKernelSeconds = 1e5;

enum class Dtype { Bf16, Fp8 };
enum class Pass { Fwd, Bwd };
/// The three GEMMs of a linear layer: forward, data gradient, weight gradient.
enum class GemmRole { Fprop, Dgrad, Wgrad };
enum class Mask { None, CausalTopLeft, CausalBottomRight };

/// Names as they appear in calibration tables and reports: "bf16", "fwd", "causal_top_left",
/// "interpolated".
std::string_view dtype_name(Dtype d);
std::string_view pass_name(Pass p);
std::string_view mask_name(Mask m);
/// "fprop", "dgrad", "wgrad": as calibration tables' `role` names the last two.
std::string_view role_name(GemmRole r);

/// One attention call: bh = batch x query heads; gqa = query heads per KV head.
struct AttentionShape {
  std::int64_t d_qk = 128;
  std::int64_t d_v = 128;
  Mask mask = Mask::None;
  std::int64_t gqa = 1;
  std::int64_t s_q = 0;
  std::int64_t s_kv = 0;
  std::int64_t bh = 0;
};

/// Attended (query, key) pairs E, in closed form.
std::int64_t attention_pairs(Mask mask, std::int64_t s_q, std::int64_t s_kv);
Flops gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k);
Flops grouped_gemm_flops(std::int64_t experts, std::int64_t tokens_per_expert, std::int64_t n,
                         std::int64_t k);
Flops attention_flops(const AttentionShape& shape, Pass pass);

struct ComputeCost {
  Time time;
  Flops flops;
  Bytes bytes;
  Source source = Source::Roofline;
  KernelClass kind = KernelClass::Other;
  std::string_view impl;  ///< the answering table's kernel or library; empty: the roofline
  bool from_base = false;  ///< the answer came from the calibration's base table
};

/// The GPU's figures for the fallback; the caller fills the peaks from the cluster's GPU.
struct Roofline {
  double peak_bf16_tflops = 0;
  double peak_fp8_tflops = 0;
  double hbm_GBps = 0;  // NOLINT(readability-identifier-naming): unit in the name
  /// Dense NVFP4; 0: the GPU has no FP4 tensor cores. The nvfp4 recipe's GEMMs run at it.
  double peak_fp4_tflops = 0;
  /// An NVFP4 GEMM's share of the FP4 peak over the FP8 GEMM's share of the FP8 peak.
  double nvfp4_gemm_ratio = 1.0;
  /// Scales GEMMs' efficiency by shape (gemm_shape.hpp): at kGemmReference (0.7) it gives
  /// cuBLAS's published H100 SXM rate at 8192^3 (798 TF) and falls with the output tiles'
  /// waves over the SMs for thinner GEMMs.
  double efficiency = kGemmReference;
  /// Scales attention's efficiency curves (attention_kernel.hpp): at kAttentionReference (0.6)
  /// they give the published H100 SXM rates by call size (FA3 at d = 128: 0.47-0.66 of 989 TF
  /// forward, 0.32-0.57 backward, from 512 to 16K tokens).
  double attention_efficiency = kAttentionReference;
  /// The GPU's SMs, for whole waves of attention's thread blocks (Hopper SXM: 132).
  std::int64_t sm_count = 132;
  /// An FP8 weight gradient's throughput over the forward GEMM's of the same FLOPs (FP32
  /// accumulation): DeepGEMM on H800, weights 4096 x 7168 over 4096 tokens, 942 TF against
  /// 1377 TF forward (DeepGEMM PRs #95 and #81). BF16 weight gradients: no published penalty
  /// was found; their shape alone prices them.
  double fp8_wgrad_ratio = 0.68;
  /// Achieved over HBM bandwidth for memory-bound kernels (norms, casts, SwiGLU, permutes):
  /// torchao's blockwise FP8 quantize reaches 0.79-0.87 of H100's 3.35 TB/s at 32K-128K x 4096
  /// and Liger's RMSNorm 0.84 at 4096 x 16384 (docs/compute-model.md).
  double memory_efficiency = 0.8;
  /// Per kernel: launch and tail, the floor of a tiny kernel's time.
  Time launch_overhead = Time::us(4);
};

class ComputeModel {
 public:
  /// `calibration` may be null (roofline only); it must outlive the model. `scaling`: the
  /// table was made on another GPU, whose figures these are. `attention_kernel`: the kernel
  /// the workload runs; Auto lets a table of any implementation answer.
  ComputeModel(const Calibration* calibration, Roofline roofline,
               std::optional<TableScaling> scaling = std::nullopt,
               AttentionKernel attention_kernel = AttentionKernel::Auto,
               Fp8Recipe fp8_recipe = Fp8Recipe::CastTranspose);

  /// One role of the linear layer Y[m x n] = X[m x k] W[k x n].
  ComputeCost gemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                   GemmRole role) const;
  ComputeCost grouped_gemm(Dtype dtype, std::int64_t experts, std::int64_t tokens_per_expert,
                           std::int64_t n, std::int64_t k, GemmRole role) const;
  /// Fwd: the forward GEMM; Bwd: the data and the weight gradient together.
  ComputeCost gemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k, Pass pass) const;
  ComputeCost grouped_gemm(Dtype dtype, std::int64_t experts, std::int64_t tokens_per_expert,
                           std::int64_t n, std::int64_t k, Pass pass) const;
  ComputeCost attention(Dtype dtype, const AttentionShape& shape, Pass pass) const;
  /// A memory-bound kernel of class `kind` (memory_bound(kind)) that moves `bytes` in `pass`:
  /// from a `memory` table of that kernel and pass where one answers, else the roofline.
  ComputeCost memory(KernelClass kind, Bytes bytes, Pass pass = Pass::Fwd) const;

  const Roofline& roofline() const { return roofline_; }
  AttentionKernel attention_kernel() const { return attention_kernel_; }
  /// How the workload casts FP8 GEMM operands (the casts' bytes follow it).
  Fp8Recipe fp8_recipe() const { return fp8_recipe_; }

  struct Query;  // public so that table matching can be a free function

 private:
  bool has_table(const Query& q) const;
  /// GEMMs and grouped GEMMs: `fill` sets what differs (op, key, point, work, bytes) for a
  /// role and the pass its table has (a whole backward: twice the FLOPs), in the order above.
  ComputeCost gemm_family(Dtype dtype, GemmRole role,
                          const std::function<void(Query&, GemmRole, double)>& fill) const;
  ComputeCost gemm_family_at(Dtype dtype, GemmRole role,
                             const std::function<void(Query&, GemmRole, double)>& fill) const;
  /// An FP8 GEMM's cost as the nvfp4 recipe runs it, on FP4 tensor cores.
  ComputeCost on_fp4(ComputeCost fp8) const;
  ComputeCost answer(const Query& q) const;
  Time roofline_time(const Query& q) const;
  /// A table's time on the cluster's GPU, the table made on the GPU of `from`.
  Time scaled(const Query& q, Time table_time, const TableScaling& from) const;

  const Calibration* calibration_;
  int deepest_tier_ = 0;  ///< the largest tier among the calibration's tables
  Roofline roofline_;
  std::optional<TableScaling> scaling_;
  AttentionKernel attention_kernel_;
  Fp8Recipe fp8_recipe_;
};

}  // namespace hopsim::work
