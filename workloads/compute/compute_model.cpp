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

namespace hopsim::work {
namespace {

// Queries beyond this extent are programming errors (closed forms stay within int64).
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 31;
// Outputs (and attention's O, dQ, dK, dV) are written in BF16 whatever the input dtype.
constexpr double kOutputBytes = 2;
// One kernel call may take at most this long (a plan of such calls stays within simulated time).
constexpr double kMaxKernelSeconds = 1e5;

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

ComputeCost twice(const ComputeCost& c) {
  return ComputeCost{2 * c.time, Flops{2 * c.flops.n}, Bytes{2 * c.bytes.n}, c.source};
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

// A table answers a query when op, pass and selecting key match, and it times what the query
// means: balanced routing ("uniform" or no imbalance) and the whole pass (no partial "role").
bool answers(const CalibrationTable& t, const ComputeModel::Query& q) {
  const auto imbalance = t.variant.find("imbalance");
  return t.op == q.op && t.pass == pass_name(q.pass) && t.key == q.key &&
         (imbalance == t.variant.end() || imbalance->second == "uniform") &&
         !t.variant.contains("role");
}

}  // namespace

ComputeModel::ComputeModel(const Calibration* calibration, Roofline roofline,
                           std::optional<TableScaling> scaling)
    : calibration_(calibration), roofline_(roofline), scaling_(scaling) {
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
  HOPSIM_ASSERT(roofline_.launch_overhead >= Time{}, "negative launch overhead {} ps",
                roofline_.launch_overhead.count_ps());
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
  const double compute_s = q.flops.n / (q.peak_tflops * 1e12 * q.efficiency);
  const double memory_s = as_double(q.bytes.n) / (roofline_.hbm_GBps * 1e9);
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
  ComputeCost best{roofline_time(q), q.flops, q.bytes, Source::Roofline};
  if (calibration_ == nullptr) {
    return best;
  }
  for (const CalibrationTable& t : calibration_->tables) {
    if (!answers(t, q)) {
      continue;
    }
    const std::optional<TableAnswer> a = lookup_table(t, q.point, q.work);
    if (a && a->source < best.source) {  // strictly better: the earliest table wins ties
      best.time = scaling_ ? scaled(q, a->time) : a->time;
      best.source = a->source;
    }
  }
  return best;
}

Time ComputeModel::scaled(const Query& q, Time table_time) const {
  const double t = table_time.seconds();
  const bool fp8 = q.key.at("dtype") == dtype_name(Dtype::Fp8);
  const double table_peak = (fp8 ? scaling_->fp8_tflops : scaling_->bf16_tflops) * 1e12;
  const double compute_share = q.flops.n / (t * table_peak);
  const double memory_share = as_double(q.bytes.n) / (t * scaling_->hbm_GBps * 1e9);
  const double factor = compute_share >= memory_share
                            ? table_peak / (q.peak_tflops * 1e12)
                            : scaling_->hbm_GBps / roofline_.hbm_GBps;
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

ComputeCost ComputeModel::gemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                               Pass pass) const {
  check_extent("m", m);
  check_extent("n", n);
  check_extent("k", k);
  return gemm_family(dtype, pass, [&](Query& q, double factor) {
    q.op = "gemm";
    q.key = {{"dtype", std::string(dtype_name(dtype))}};
    q.point = {m, n, k};
    q.work = [factor](std::span<const std::int64_t> x) {
      return factor * gemm_flops(x[0], x[1], x[2]).n;
    };
    q.flops = Flops{factor * gemm_flops(m, n, k).n};
    q.bytes = bytes_of(factor * gemm_bytes(dtype, m, n, k));
  });
}

ComputeCost ComputeModel::grouped_gemm(Dtype dtype, std::int64_t experts,
                                       std::int64_t tokens_per_expert, std::int64_t n,
                                       std::int64_t k, Pass pass) const {
  check_extent("experts", experts);
  check_extent("tokens_per_expert", tokens_per_expert);
  check_extent("n", n);
  check_extent("k", k);
  return gemm_family(dtype, pass, [&](Query& q, double factor) {
    q.op = "grouped_gemm";
    q.key = {{"dtype", std::string(dtype_name(dtype))},
             {"n", std::to_string(n)},
             {"k", std::to_string(k)}};
    q.point = {experts, tokens_per_expert};
    q.work = [factor, n, k](std::span<const std::int64_t> x) {
      return factor * grouped_gemm_flops(x[0], x[1], n, k).n;
    };
    q.flops = Flops{factor * grouped_gemm_flops(experts, tokens_per_expert, n, k).n};
    q.bytes = bytes_of(factor * as_double(experts) * gemm_bytes(dtype, tokens_per_expert, n, k));
  });
}

ComputeCost ComputeModel::gemm_family(Dtype dtype, Pass pass,
                                      const std::function<void(Query&, double)>& fill) const {
  const auto query = [&](Pass p) {
    Query q;
    q.pass = p;
    q.peak_tflops = dtype == Dtype::Fp8 ? roofline_.peak_fp8_tflops : roofline_.peak_bf16_tflops;
    q.efficiency = roofline_.efficiency;
    q.kernels = p == Pass::Bwd ? 2 : 1;
    fill(q, p == Pass::Bwd ? 2 : 1);  // backward: data and weight gradients
    return q;
  };
  const Query q = query(pass);
  if (pass == Pass::Bwd && !has_table(q)) {
    return twice(answer(query(Pass::Fwd)));
  }
  return answer(q);
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
  q.peak_tflops = dtype == Dtype::Fp8 ? roofline_.peak_fp8_tflops : roofline_.peak_bf16_tflops;
  q.efficiency = roofline_.attention_efficiency;
  return answer(q);
}

}  // namespace hopsim::work
