// Kernel times from calibration tables and a roofline; work formulas; the per-source tally.
#include "workloads/compute/compute_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "sim/problem.hpp"
#include "workloads/compute/calibration_lookup.hpp"
#include "workloads/compute/gemm_shape.hpp"

namespace hopsim::work {
namespace {

// Outputs (and attention's O, dQ, dK, dV) are written in BF16 whatever the input dtype.
constexpr double kOutputBytes = 2;

void check_extent(std::string_view what, std::int64_t v) {
  HOPSIM_ASSERT(v >= 0 && v <= kMaxExtent, "{} = {} is outside [0, 2^31]", what, v);
}

double element_bytes(Dtype d) {
  return d == Dtype::Fp8 ? 1 : 2;
}

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

Bytes bytes_of(double b) {
  return Bytes{std::llround(b)};
}

// The shares of a GPU's peak and of its HBM bandwidth a kernel of `flops` and `bytes` reached
// in `seconds`; the larger says which bounded it (a compute-bound one is at least as near its
// peak as its bandwidth).
struct Shares {
  double compute;
  double memory;
  bool compute_bound() const { return compute >= memory; }
};
Shares shares_of(Flops flops, Bytes bytes, double seconds, double peak_flops_per_s,
                 double hbm_GBps) {
  return {flops.n / (seconds * peak_flops_per_s), as_double(bytes.n) / (seconds * hbm_GBps * 1e9)};
}

double gemm_bytes(Dtype d, std::int64_t m, std::int64_t n, std::int64_t k) {
  return element_bytes(d) * (as_double(m) * as_double(k) + as_double(k) * as_double(n)) +
         kOutputBytes * as_double(m) * as_double(n);
}

// Forward: read Q and K, V of bh / gqa KV heads, write O. Backward reads Q, K, V, O, dO and
// writes dQ, dK, dV: twice the forward.
double attention_bytes(Dtype d, const AttentionShape& s, Pass pass) {
  const double kv_heads = as_double(s.bh) / as_double(s.gqa);
  const double in = as_double(s.bh) * as_double(s.s_q) * as_double(s.d_qk) +
                    kv_heads * as_double(s.s_kv) * as_double(s.d_qk + s.d_v);
  const double out = as_double(s.bh) * as_double(s.s_q) * as_double(s.d_v);
  const double fwd = element_bytes(d) * in + kOutputBytes * out;
  return pass == Pass::Bwd ? 2 * fwd : fwd;
}

}  // namespace

std::string_view dtype_name(Dtype d) {
  constexpr std::array<std::string_view, 2> kNames{"bf16", "fp8"};
  return kNames[static_cast<std::size_t>(d)];
}

std::string_view pass_name(Pass p) {
  constexpr std::array<std::string_view, 2> kNames{"fwd", "bwd"};
  return kNames[static_cast<std::size_t>(p)];
}

std::string_view mask_name(Mask m) {
  constexpr std::array<std::string_view, 3> kNames{"none", "causal_top_left",
                                                   "causal_bottom_right"};
  return kNames[static_cast<std::size_t>(m)];
}

std::string_view role_name(GemmRole r) {
  constexpr std::array<std::string_view, 3> kNames{"fprop", "dgrad", "wgrad"};
  return kNames[static_cast<std::size_t>(r)];
}

std::int64_t attention_pairs(Mask mask, std::int64_t s_q, std::int64_t s_kv) {
  check_extent("s_q", s_q);
  check_extent("s_kv", s_kv);
  const auto triangle = [](std::int64_t n) { return n * (n + 1) / 2; };
  switch (mask) {
    case Mask::None:
      return s_q * s_kv;
    case Mask::CausalTopLeft:  // row i sees keys 0..i: 1, 2, ..., then s_kv once i >= s_kv
      return s_q <= s_kv ? triangle(s_q) : triangle(s_kv) + (s_q - s_kv) * s_kv;
    case Mask::CausalBottomRight:  // row i sees keys 0..s_kv-s_q+i; the first rows may see none
      return s_kv >= s_q ? triangle(s_q) + s_q * (s_kv - s_q) : triangle(s_kv);
  }
  return 0;
}

Flops gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k) {
  return Flops{2 * as_double(m) * as_double(n) * as_double(k)};
}

Flops grouped_gemm_flops(std::int64_t experts, std::int64_t tokens_per_expert, std::int64_t n,
                         std::int64_t k) {
  return Flops{as_double(experts) * gemm_flops(tokens_per_expert, n, k).n};
}

Flops attention_flops(const AttentionShape& s, Pass pass) {
  const double fwd = 2 * as_double(s.bh) * as_double(s.d_qk + s.d_v) *
                     as_double(attention_pairs(s.mask, s.s_q, s.s_kv));
  return Flops{pass == Pass::Bwd ? 2.5 * fwd : fwd};
}

// One question to the tables and the roofline. `work` gives the FLOPs at a grid point of the
// same key; `kernels` counts launch overheads for the roofline.
struct ComputeModel::Query {
  std::string_view op;
  Pass pass = Pass::Fwd;
  std::string_view role;  ///< a backward GEMM table's role ("dgrad", "wgrad"), or none
  std::string_view impl;  ///< attention: the only implementation that may answer; empty: any
  bool memory = false;  ///< a memory-bound kernel: its roofline is bytes over HBM x efficiency
  /// Attention: the call, whose FLOPs a table of the other causal mask counts with its own.
  std::optional<AttentionShape> attention;
  std::map<std::string, std::string> key;
  std::vector<std::int64_t> point;
  WorkAt work;
  Flops flops;
  Bytes bytes;
  double peak_tflops = 0;
  double efficiency = 0;
  std::int64_t kernels = 1;
};

namespace {

// Whether a table's key selects the query. Attention, where no table of its own key answers: a
// table answers any gqa (FlashAttention's FLOP rate follows the query heads; sharing K and V
// among them lowers its memory traffic, which does not bound it at these head dims), and a
// square call (s_q = s_kv), where the two causal masks are one mask, from a table of either.
bool same_key(const CalibrationTable& t, const ComputeModel::Query& q) {
  if (!q.attention) {
    return t.key == q.key;
  }
  if (t.key.size() != q.key.size()) {
    return false;
  }
  const bool square = q.attention->s_q == q.attention->s_kv;
  for (const auto& [name, value] : q.key) {
    const auto it = t.key.find(name);
    if (it == t.key.end()) {
      return false;
    }
    const bool both_causal = name == "mask" && value != mask_name(Mask::None) &&
                             it->second != mask_name(Mask::None);
    if (it->second != value && name != "gqa" && !(square && both_causal)) {
      return false;
    }
  }
  return true;
}

// A table answers a query when op, pass and selecting key match, and it times what the query
// means: balanced routing ("uniform" or no imbalance) and the query's role (or, without one,
// the whole pass).
bool answers(const CalibrationTable& t, const ComputeModel::Query& q) {
  const auto imbalance = t.variant.find("imbalance");
  const auto role = t.variant.find("role");
  return t.op == q.op && t.pass == pass_name(q.pass) && same_key(t, q) &&
         (q.impl.empty() || t.impl == q.impl) &&
         (imbalance == t.variant.end() || imbalance->second == "uniform") &&
         (role == t.variant.end() ? q.role.empty() : role->second == q.role);
}

// The FLOPs at a table's grid points: the query's formula, with the table's own mask.
WorkAt work_in(const CalibrationTable& t, const ComputeModel::Query& q) {
  if (!q.attention || t.key.at("mask") == q.key.at("mask")) {
    return q.work;
  }
  AttentionShape shape = *q.attention;
  shape.mask = t.key.at("mask") == mask_name(Mask::CausalTopLeft) ? Mask::CausalTopLeft
                                                                   : Mask::CausalBottomRight;
  const Pass pass = q.pass;
  return [shape, pass](std::span<const std::int64_t> x) {
    AttentionShape at = shape;
    at.s_q = x[0];
    at.s_kv = x[1];
    at.bh = x[2];
    return attention_flops(at, pass).n;
  };
}

// An attention call with fewer batch x heads than a table's grid: the rate at the same
// sequence lengths and the next bh up that the table answers, times the call's share of whole
// waves over that point's (fewer blocks fill the GPU less). Clamped, as it leaves the grid.
std::optional<TableAnswer> fewer_heads(const CalibrationTable& t, const ComputeModel::Query& q,
                                       const WorkAt& work, std::int64_t sms) {
  const std::int64_t bh = q.point[2];
  const std::int64_t rows = q.pass == Pass::Fwd ? q.point[0] : q.point[1];
  const auto waves = [&](std::int64_t heads) {
    return whole_waves(as_double(attention_blocks(heads, rows)), as_double(sms));
  };
  for (const std::int64_t v : t.axes[2].values) {
    if (v <= bh) {
      continue;
    }
    const std::array<std::int64_t, 3> at{q.point[0], q.point[1], v};
    const std::optional<TableAnswer> a = lookup_table(t, at, work);
    if (!a) {
      continue;
    }
    const double rate = work(at) / a->time.seconds() * waves(bh) / waves(v);
    return TableAnswer{Time::from_seconds_ceil(work(q.point) / rate), Source::Clamped};
  }
  return std::nullopt;
}

}  // namespace

ComputeModel::ComputeModel(const Calibration* calibration, Roofline roofline,
                           std::optional<TableScaling> scaling, AttentionKernel attention_kernel,
                           Fp8Recipe fp8_recipe)
    : calibration_(calibration),
      roofline_(roofline),
      scaling_(scaling),
      attention_kernel_(attention_kernel),
      fp8_recipe_(fp8_recipe) {
  if (calibration_ != nullptr) {
    for (const CalibrationTable& t : calibration_->tables) {
      deepest_tier_ = std::max(deepest_tier_, t.tier);
    }
  }
  HOPSIM_ASSERT(!scaling_ || (scaling_->bf16_tflops > 0 && scaling_->fp8_tflops > 0 &&
                              scaling_->hbm_GBps > 0),
                "table scaling needs the table GPU's positive peaks");
  HOPSIM_ASSERT(
      roofline_.peak_bf16_tflops > 0 && roofline_.peak_fp8_tflops > 0 && roofline_.hbm_GBps > 0,
      "roofline needs positive peaks, got bf16 {} TF, fp8 {} TF, HBM {} GB/s",
      roofline_.peak_bf16_tflops, roofline_.peak_fp8_tflops, roofline_.hbm_GBps);
  HOPSIM_ASSERT(roofline_.efficiency > 0 && roofline_.efficiency <= 1 &&
                    roofline_.attention_efficiency > 0 && roofline_.attention_efficiency <= 1,
                "roofline efficiencies must be in (0, 1], got {} and {}", roofline_.efficiency,
                roofline_.attention_efficiency);
  HOPSIM_ASSERT(roofline_.fp8_wgrad_ratio > 0 && roofline_.fp8_wgrad_ratio <= 1 &&
                    roofline_.memory_efficiency > 0 && roofline_.memory_efficiency <= 1,
                "fp8_wgrad_ratio and memory_efficiency must be in (0, 1], got {} and {}",
                roofline_.fp8_wgrad_ratio, roofline_.memory_efficiency);
  HOPSIM_ASSERT(roofline_.launch_overhead >= Time{}, "negative launch overhead {} ps",
                roofline_.launch_overhead.count_ps());
  HOPSIM_ASSERT(roofline_.nvfp4_gemm_ratio > 0 && roofline_.nvfp4_gemm_ratio <= 1,
                "nvfp4_gemm_ratio must be in (0, 1], got {}", roofline_.nvfp4_gemm_ratio);
  HOPSIM_ASSERT(!fp8_recipe_runs_fp4(fp8_recipe_) || roofline_.peak_fp4_tflops > 0,
                "the {} recipe needs the GPU's FP4 peak", fp8_recipe_name(fp8_recipe_));
  if (calibration_ != nullptr) {
    for (const CalibrationTable& table : calibration_->tables) {
      check_table(table);
    }
  }
}

bool ComputeModel::has_table(const Query& q) const {
  if (calibration_ == nullptr) {
    return false;
  }
  return std::any_of(calibration_->tables.begin(), calibration_->tables.end(),
                     [&](const CalibrationTable& t) { return answers(t, q); });
}

Time ComputeModel::roofline_time(const Query& q) const {
  const double compute_s = q.memory ? 0 : q.flops.n / (q.peak_tflops * 1e12 * q.efficiency);
  const double memory_s = as_double(q.bytes.n) /
                          (roofline_.hbm_GBps * 1e9 * (q.memory ? roofline_.memory_efficiency : 1));
  const double seconds = std::max(compute_s, memory_s);
  if (!(seconds <= kMaxKernelSeconds)) {  // bounded before it becomes a Time
    const bool memory = !(compute_s >= memory_s);
    throw LimitError(
        memory ? "/cluster/gpu/hbm_GBps" : "/cluster/gpu",
        fmt::format("one kernel ({:.3g} FLOPs, {:.3g} bytes) would take {:.3g} s on the "
                    "roofline ({:.3g} TFLOP/s at efficiency {:.3g}, {:.3g} GB/s HBM); at most "
                    "{:.0e} s per kernel can be simulated",
                    q.flops.n, as_double(q.bytes.n), seconds, q.peak_tflops, q.efficiency,
                    roofline_.hbm_GBps, kMaxKernelSeconds));
  }
  return q.kernels * roofline_.launch_overhead + Time::from_seconds_ceil(seconds);
}

ComputeCost ComputeModel::answer(const Query& q) const {
  ComputeCost best{
      roofline_time(q), q.flops, q.bytes, Source::Roofline, KernelClass::Other, {}, false};
  if (calibration_ == nullptr) {
    return best;
  }
  // The file's own tables, then its base's, then that base's base's. In each, tables of the
  // query's own key first; attention's equivalent keys (same_key) only where none of those
  // answers.
  for (int tier = 0; tier <= deepest_tier_; ++tier) {
    for (const bool exact_key : {true, false}) {
      for (const CalibrationTable& t : calibration_->tables) {
        if (t.tier != tier || !answers(t, q) || (t.key == q.key) != exact_key) {
          continue;
        }
        const WorkAt work = work_in(t, q);
        std::optional<TableAnswer> a = lookup_table(t, q.point, work);
        if (!a && q.attention && q.point[2] < t.axes[2].values.front()) {
          a = fewer_heads(t, q, work, roofline_.sm_count);
        }
        if (a && a->source < best.source) {  // strictly better: the earliest table wins ties
          const std::optional<TableScaling>& from = t.scaling ? t.scaling : scaling_;
          best.time = from ? scaled(q, a->time, *from) : a->time;
          best.source = a->source;
          best.impl = t.impl;
          best.from_base = tier >= 1;
        }
      }
      if (best.source != Source::Roofline) {
        return best;
      }
    }
  }
  return best;
}

Time ComputeModel::scaled(const Query& q, Time table_time, const TableScaling& from) const {
  const double t = table_time.seconds();
  const bool fp8 = q.key.at("dtype") == dtype_name(Dtype::Fp8);
  const double table_peak = (fp8 ? from.fp8_tflops : from.bf16_tflops) * 1e12;
  // Every shipped table's GPU runs its GEMMs at the reference share of its peak; the
  // cluster's GPU at gpu.gemm_efficiency's, as the roofline does (gemm_shape.hpp).
  const bool gemm = q.op == "gemm" || q.op == "grouped_gemm";
  const double share = gemm ? kGemmReference / roofline_.efficiency : 1.0;
  const bool compute_bound =
      shares_of(q.flops, q.bytes, t, table_peak, from.hbm_GBps).compute_bound();
  const double factor = compute_bound ? table_peak / (q.peak_tflops * 1e12) * share
                                      : from.hbm_GBps / roofline_.hbm_GBps;
  const double seconds = t * factor;
  if (!(seconds <= kMaxKernelSeconds)) {
    throw LimitError("/cluster/gpu",
                     fmt::format("one kernel would take {:.3g} s once its table time ({:.3g} s) "
                                 "is scaled to the cluster's GPU; at most {:.0e} s per kernel "
                                 "can be simulated",
                                 seconds, t, kMaxKernelSeconds));
  }
  return Time::from_seconds_ceil(seconds);
}

namespace {

// The GEMM a role runs, as the forward's (m, n, k): dgrad (m, k, n), wgrad (k, n, m).
std::array<std::int64_t, 3> role_shape(GemmRole role, std::int64_t m, std::int64_t n,
                                       std::int64_t k) {
  switch (role) {
    case GemmRole::Dgrad:
      return {m, k, n};
    case GemmRole::Wgrad:
      return {k, n, m};
    case GemmRole::Fprop:
      break;
  }
  return {m, n, k};
}

// A weight gradient reads and writes its k x n output in FP32 (accumulation into the main
// gradient) where gemm_bytes counts one BF16 write: 4 + 4 - 2 more bytes per weight.
double wgrad_extra_bytes(std::int64_t k, std::int64_t n) {
  return 6 * as_double(k) * as_double(n);
}

KernelClass gemm_class(GemmRole role, bool grouped) {
  constexpr std::array<KernelClass, 3> kDense{KernelClass::GemmFprop, KernelClass::GemmDgrad,
                                              KernelClass::GemmWgrad};
  constexpr std::array<KernelClass, 3> kGrouped{
      KernelClass::GroupedFprop, KernelClass::GroupedDgrad, KernelClass::GroupedWgrad};
  return (grouped ? kGrouped : kDense)[static_cast<std::size_t>(role)];
}

// The sum of a data and a weight gradient: one backward.
ComputeCost both(const ComputeCost& dgrad, const ComputeCost& wgrad) {
  return ComputeCost{dgrad.time + wgrad.time, Flops{dgrad.flops.n + wgrad.flops.n},
                     Bytes{dgrad.bytes.n + wgrad.bytes.n}, std::max(dgrad.source, wgrad.source),
                     dgrad.kind, dgrad.impl, dgrad.from_base || wgrad.from_base};
}

}  // namespace

ComputeCost ComputeModel::gemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                               GemmRole role) const {
  check_extent("m", m);
  check_extent("n", n);
  check_extent("k", k);
  ComputeCost c = gemm_family(dtype, role, [&](Query& q, GemmRole shape, double factor) {
    const auto [sm, sn, sk] = role_shape(shape, m, n, k);
    q.op = "gemm";
    q.key = {{"dtype", std::string(dtype_name(dtype))}};
    q.point = {sm, sn, sk};
    q.work = [factor](std::span<const std::int64_t> x) {
      return factor * gemm_flops(x[0], x[1], x[2]).n;
    };
    q.flops = Flops{factor * gemm_flops(sm, sn, sk).n};
    q.bytes = bytes_of(factor * gemm_bytes(dtype, sm, sn, sk) +
                       (shape == GemmRole::Wgrad ? wgrad_extra_bytes(k, n) : 0));
    q.efficiency = gemm_shape_efficiency(gemm_family_of(dtype == Dtype::Fp8, false), 1, sm, sn,
                                         q.efficiency, roofline_.sm_count);
  });
  c.kind = gemm_class(role, false);
  return c;
}

ComputeCost ComputeModel::grouped_gemm(Dtype dtype, std::int64_t experts,
                                       std::int64_t tokens_per_expert, std::int64_t n,
                                       std::int64_t k, GemmRole role) const {
  check_extent("experts", experts);
  check_extent("tokens_per_expert", tokens_per_expert);
  check_extent("n", n);
  check_extent("k", k);
  ComputeCost c = gemm_family(dtype, role, [&](Query& q, GemmRole shape, double factor) {
    q.op = "grouped_gemm";
    q.key = {{"dtype", std::string(dtype_name(dtype))},
             {"n", std::to_string(n)},
             {"k", std::to_string(k)}};
    q.point = {experts, tokens_per_expert};
    q.work = [factor, n, k](std::span<const std::int64_t> x) {
      return factor * grouped_gemm_flops(x[0], x[1], n, k).n;
    };
    q.flops = Flops{factor * grouped_gemm_flops(experts, tokens_per_expert, n, k).n};
    // The role's shape moves the same inputs and outputs, transposed.
    const auto [sm, sn, sk] = role_shape(shape, tokens_per_expert, n, k);
    q.bytes = bytes_of(factor * as_double(experts) *
                       (gemm_bytes(dtype, sm, sn, sk) +
                        (shape == GemmRole::Wgrad ? wgrad_extra_bytes(k, n) : 0)));
    q.efficiency = gemm_shape_efficiency(gemm_family_of(dtype == Dtype::Fp8, true), experts, sm,
                                         sn, q.efficiency, roofline_.sm_count);
  });
  c.kind = gemm_class(role, true);
  return c;
}

ComputeCost ComputeModel::gemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                               Pass pass) const {
  if (pass == Pass::Fwd) {
    return gemm(dtype, m, n, k, GemmRole::Fprop);
  }
  return both(gemm(dtype, m, n, k, GemmRole::Dgrad), gemm(dtype, m, n, k, GemmRole::Wgrad));
}

ComputeCost ComputeModel::grouped_gemm(Dtype dtype, std::int64_t experts,
                                       std::int64_t tokens_per_expert, std::int64_t n,
                                       std::int64_t k, Pass pass) const {
  if (pass == Pass::Fwd) {
    return grouped_gemm(dtype, experts, tokens_per_expert, n, k, GemmRole::Fprop);
  }
  return both(grouped_gemm(dtype, experts, tokens_per_expert, n, k, GemmRole::Dgrad),
              grouped_gemm(dtype, experts, tokens_per_expert, n, k, GemmRole::Wgrad));
}

// The GEMM a workload runs: the FP8 one on FP4 tensor cores where its recipe says (nvfp4).
ComputeCost ComputeModel::gemm_family(
    Dtype dtype, GemmRole role,
    const std::function<void(Query&, GemmRole, double)>& fill) const {
  const ComputeCost c = gemm_family_at(dtype, role, fill);
  return dtype == Dtype::Fp8 && fp8_recipe_runs_fp4(fp8_recipe_) ? on_fp4(c) : c;
}

// NVFP4's GEMM is the FP8 GEMM of its shape (every table and the roofline know FP8 GEMMs; none
// has an FP4 kernel) on tensor cores FP4_peak / FP8_peak times faster, at nvfp4_gemm_ratio of
// the FP8 GEMM's share of its peak. Past its launch, a time the FP8 peak bounded (a share of it
// at least the share of HBM bandwidth it reached, as a table is scaled to another GPU) shrinks
// by that, but not below the time its FP8 bytes take over HBM (the FP4 operands are smaller,
// the BF16 output is not); a memory-bound one stays.
ComputeCost ComputeModel::on_fp4(ComputeCost fp8) const {
  const double launch = roofline_.launch_overhead.seconds();
  const double body = fp8.time.seconds() - launch;
  if (!(body > 0)) {
    return fp8;
  }
  const Shares at =
      shares_of(fp8.flops, fp8.bytes, body, roofline_.peak_fp8_tflops * 1e12, roofline_.hbm_GBps);
  if (at.compute_bound()) {
    const double faster =
        roofline_.peak_fp8_tflops / (roofline_.peak_fp4_tflops * roofline_.nvfp4_gemm_ratio);
    fp8.time = Time::from_seconds_ceil(launch + body * std::max(faster, at.memory));
  }
  return fp8;
}

// One role of a GEMM family in the workload's dtype, from its own table, the whole backward's,
// the forward's, or the roofline (gemm_family).
ComputeCost ComputeModel::gemm_family_at(
    Dtype dtype, GemmRole role,
    const std::function<void(Query&, GemmRole, double)>& fill) const {
  // An FP8 weight gradient runs at this share of the forward's rate (FP32 accumulation).
  const double ratio =
      role == GemmRole::Wgrad && dtype == Dtype::Fp8 ? roofline_.fp8_wgrad_ratio : 1.0;
  const auto query = [&](Pass pass, GemmRole shape, double factor) {
    Query q;
    q.pass = pass;
    q.peak_tflops = dtype == Dtype::Fp8 ? roofline_.peak_fp8_tflops : roofline_.peak_bf16_tflops;
    q.efficiency = roofline_.efficiency * ratio;
    fill(q, shape, factor);
    return q;
  };
  if (role == GemmRole::Fprop) {
    return answer(query(Pass::Fwd, role, 1));
  }
  Query own = query(Pass::Bwd, role, 1);
  own.role = role_name(role);
  if (has_table(own)) {
    return answer(own);
  }
  Query whole = query(Pass::Bwd, GemmRole::Fprop, 2);
  whole.kernels = 2;
  if (has_table(whole)) {  // both gradients in one time: half of it is this role's
    ComputeCost c = answer(whole);
    c.time = Time::ps((c.time.count_ps() + 1) / 2);
    c.flops = own.flops;
    c.bytes = own.bytes;
    return c;
  }
  ComputeCost c = answer(query(Pass::Fwd, role, 1));
  if (ratio != 1.0 && c.source != Source::Roofline) {  // the forward's table, at wgrad's rate
    c.time = Time::from_seconds_ceil(c.time.seconds() / ratio);
  }
  return c;
}

ComputeCost ComputeModel::memory(KernelClass kind, Bytes bytes, Pass pass) const {
  HOPSIM_ASSERT(memory_bound(kind), "{} is not a memory-bound kernel", kernel_class_name(kind));
  HOPSIM_ASSERT(bytes.n >= 0, "negative bytes {}", bytes.n);
  Query q;
  q.op = "memory";
  q.pass = pass;
  q.key = {{"dtype", std::string(dtype_name(Dtype::Bf16))},
           {"kernel", std::string(kernel_class_name(kind))}};
  q.point = {bytes.n};
  q.work = [](std::span<const std::int64_t> x) { return as_double(x[0]); };
  q.bytes = bytes;
  q.memory = true;
  ComputeCost c = answer(q);
  c.kind = kind;
  return c;
}

ComputeCost ComputeModel::attention(Dtype dtype, const AttentionShape& shape, Pass pass) const {
  check_extent("d_qk", shape.d_qk);
  check_extent("d_v", shape.d_v);
  check_extent("bh", shape.bh);
  HOPSIM_ASSERT(shape.gqa >= 1 && shape.gqa <= kMaxExtent, "gqa = {} must be >= 1", shape.gqa);
  Query q;
  q.op = "attn";
  q.pass = pass;
  q.key = {{"dtype", std::string(dtype_name(dtype))},
           {"d_qk", std::to_string(shape.d_qk)},
           {"d_v", std::to_string(shape.d_v)},
           {"mask", std::string(mask_name(shape.mask))},
           {"gqa", std::to_string(shape.gqa)}};
  q.point = {shape.s_q, shape.s_kv, shape.bh};
  q.work = [shape, pass](std::span<const std::int64_t> x) {
    AttentionShape at = shape;
    at.s_q = x[0];
    at.s_kv = x[1];
    at.bh = x[2];
    return attention_flops(at, pass).n;
  };
  q.flops = attention_flops(shape, pass);
  q.bytes = bytes_of(attention_bytes(dtype, shape, pass));
  q.attention = shape;
  q.peak_tflops = dtype == Dtype::Fp8 ? roofline_.peak_fp8_tflops : roofline_.peak_bf16_tflops;
  if (attention_kernel_ != AttentionKernel::Auto) {
    q.impl = attention_kernel_name(attention_kernel_);
  }
  AttentionKernelCall call;
  call.backward = pass == Pass::Bwd;
  call.causal = shape.mask != Mask::None;
  call.d_qk = shape.d_qk;
  const std::int64_t pairs = attention_pairs(shape.mask, shape.s_q, shape.s_kv);
  call.mean_keys =
      std::max(1.0, as_double(pairs) / as_double(std::max<std::int64_t>(1, shape.s_q)));
  call.blocks =
      std::max<std::int64_t>(1, attention_blocks(shape.bh, call.backward ? shape.s_kv : shape.s_q));
  if (!call.backward && splits_keys(attention_kernel_)) {
    const SplitKv split = split_kv(shape.bh / shape.gqa, shape.gqa, shape.s_q, shape.s_kv,
                                   roofline_.sm_count);
    if (split.splits > 1) {
      call.blocks = split.blocks;
      call.mean_keys = std::max(1.0, call.mean_keys / static_cast<double>(split.splits));
    }
  }
  q.efficiency = attention_efficiency(attention_kernel_, call, roofline_.attention_efficiency,
                                      roofline_.sm_count);
  ComputeCost c = answer(q);
  c.kind = pass == Pass::Fwd ? KernelClass::AttentionFwd : KernelClass::AttentionBwd;
  return c;
}

}  // namespace hopsim::work
