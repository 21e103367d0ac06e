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
// A GEMM's backward pass is two GEMMs of the forward's FLOPs (data and weight gradients): 2 F.
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
// bytes (inputs at the dtype's width, outputs in BF16; backward twice the forward's).
// A backward GEMM or grouped GEMM with no backward table is two forward-shaped ones: 2 t.
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
#include "workloads/compute/calibration.hpp"
#include "workloads/compute/source.hpp"

namespace hopsim::work {

enum class Dtype { Bf16, Fp8 };
enum class Pass { Fwd, Bwd };
enum class Mask { None, CausalTopLeft, CausalBottomRight };

/// Names as they appear in calibration tables and reports: "bf16", "fwd", "causal_top_left",
/// "interpolated".
std::string_view dtype_name(Dtype d);
std::string_view pass_name(Pass p);
std::string_view mask_name(Mask m);

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
};

/// The GPU's figures for the fallback; the caller fills the peaks from the cluster's GPU.
struct Roofline {
  double peak_bf16_tflops = 0;
  double peak_fp8_tflops = 0;
  double hbm_GBps = 0;  // NOLINT(readability-identifier-naming): unit in the name
  /// Achieved over peak for GEMMs. cuBLAS on H100 reaches 0.79-0.81 of 989 TF on large
  /// shapes (786-798 TF) but 0.5-0.7 at 1-2K (XLA's sm_90 table); the roofline answers for
  /// shapes no table covers, mostly smaller ones, so the saturated figure would flatter them.
  double efficiency = 0.7;
  /// Achieved over peak for attention: FA3 / cuDNN at d = 128 reach 0.57 (bwd) to 0.65 (fwd)
  /// of 989 TF at long sequences (FA3 paper, Figs. 5-6).
  double attention_efficiency = 0.6;
  /// Per kernel: launch and tail, the floor of a tiny kernel's time.
  Time launch_overhead = Time::us(4);
};

/// The datasheet figures of the GPU a calibration table was made on, when the cluster's GPU
/// is another one: the table's times are scaled to the cluster's (the rule above).
struct TableScaling {
  double bf16_tflops = 0;
  double fp8_tflops = 0;
  double hbm_GBps = 0;  // NOLINT(readability-identifier-naming): unit in the name
};

class ComputeModel {
 public:
  /// `calibration` may be null (roofline only); it must outlive the model. `scaling`: the
  /// table was made on another GPU, whose figures these are.
  ComputeModel(const Calibration* calibration, Roofline roofline,
               std::optional<TableScaling> scaling = std::nullopt);

  ComputeCost gemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k, Pass pass) const;
  ComputeCost grouped_gemm(Dtype dtype, std::int64_t experts, std::int64_t tokens_per_expert,
                           std::int64_t n, std::int64_t k, Pass pass) const;
  ComputeCost attention(Dtype dtype, const AttentionShape& shape, Pass pass) const;

  const Roofline& roofline() const { return roofline_; }

  struct Query;  // public so that table matching can be a free function

 private:
  bool has_table(const Query& q) const;
  /// GEMMs and grouped GEMMs: `fill` sets what differs (op, key, point, work, bytes) with the
  /// FLOP factor of the pass; a backward without a table of its own is two forward GEMMs.
  ComputeCost gemm_family(Dtype dtype, Pass pass,
                          const std::function<void(Query&, double)>& fill) const;
  ComputeCost answer(const Query& q) const;
  Time roofline_time(const Query& q) const;
  /// A table's time on the cluster's GPU (scaling_ set).
  Time scaled(const Query& q, Time table_time) const;

  const Calibration* calibration_;
  Roofline roofline_;
  std::optional<TableScaling> scaling_;
};

}  // namespace hopsim::work
