// Plausibility of a calibration table against a GPU's figures.
#include "workloads/compute/calibration_check.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "workloads/compute/compute_model.hpp"

namespace hopsim::work {
namespace {

std::int64_t key_int(const CalibrationTable& t, const char* name) {
  const auto it = t.key.find(name);
  return it == t.key.end() ? 0 : std::stoll(it->second);
}

Mask key_mask(const CalibrationTable& t) {
  const auto it = t.key.find("mask");
  for (Mask m : {Mask::None, Mask::CausalTopLeft, Mask::CausalBottomRight}) {
    if (it != t.key.end() && mask_name(m) == it->second) {
      return m;
    }
  }
  return Mask::None;
}

bool is_fp8(const CalibrationTable& t) {
  const auto it = t.key.find("dtype");
  return it != t.key.end() && it->second == "fp8";
}

// The GPU's peak for the table's dtype (TFLOP/s), if known.
std::optional<double> peak_of(const CalibrationTable& t, const GpuFigures& gpu) {
  return is_fp8(t) ? gpu.peak_fp8_tflops : gpu.peak_bf16_tflops;
}

// A memory-bound kernel's cells against HBM bandwidth: not faster than it (beyond the margin),
// not slower than any working kernel.
void check_memory_cells(const CalibrationTable& t, std::size_t index, const GpuFigures& gpu,
                        CalibrationFindings& out) {
  if (!gpu.hbm_GBps) {
    return;
  }
  for (std::size_t c = 0; c < t.time_us.size(); ++c) {
    if (!t.time_us[c]) {
      continue;
    }
    const double bytes = static_cast<double>(t.axes[0].values[c]);
    const double seconds = *t.time_us[c] * 1e-6;
    const double gbps = bytes / seconds * 1e-9;
    const std::string at = fmt::format("/tables/{}/time_us/{}", index, c);
    if (gbps > *gpu.hbm_GBps * (1 + kPeakMargin)) {
      out.problems.push_back(
          {{at, fmt::format("memory {} ({}, {}) at {} bytes: {:g} us is {:.0f} GB/s, faster "
                            "than the GPU's HBM at {:g} GB/s (+{:.0f}%)",
                            t.pass, t.key.at("kernel"), t.impl, t.axes[0].values[c], *t.time_us[c],
                            gbps, *gpu.hbm_GBps, kPeakMargin * 100)},
           "hbm_GBps"});
      return;
    }
    const double slowest =
        bytes / (*gpu.hbm_GBps * 1e9 * kSlowestShareOfPeak) + kSlowAllowanceSeconds;
    if (seconds > slowest) {
      out.problems.push_back(
          {{at, fmt::format("memory {} ({}, {}) at {} bytes: {:g} us is slower than {:g} us, "
                            "the time at {:g}% of the GPU's HBM bandwidth plus {:g} ms: no "
                            "working kernel",
                            t.pass, t.key.at("kernel"), t.impl, t.axes[0].values[c], *t.time_us[c],
                            slowest * 1e6, kSlowestShareOfPeak * 100, kSlowAllowanceSeconds * 1e3)},
           "hbm_GBps"});
      return;
    }
  }
}

void check_cells(const CalibrationTable& t, std::size_t index, const GpuFigures& gpu,
                 CalibrationFindings& out) {
  if (t.op == "memory") {
    check_memory_cells(t, index, gpu, out);
    return;
  }
  const std::optional<double> peak = peak_of(t, gpu);
  if (!peak) {
    return;
  }
  const char* figure = is_fp8(t) ? "peak_fp8_tflops" : "peak_bf16_tflops";
  for (std::size_t c = 0; c < t.time_us.size(); ++c) {
    if (!t.time_us[c]) {
      continue;
    }
    const std::vector<std::int64_t> point = t.cell_point(c);
    const double flops = table_cell_flops(t, point);
    const double seconds = *t.time_us[c] * 1e-6;
    const double tflops = flops / seconds * 1e-12;
    const std::string at = fmt::format("/tables/{}/time_us/{}", index, c);
    if (!gpu.peaks_are_lower_bounds && tflops > *peak * (1 + kPeakMargin)) {
      out.problems.push_back(
          {{at, fmt::format("{} {} ({}) at ({}): {:g} us is {:.0f} TFLOP/s, faster than the "
                            "GPU's peak of {:g} TFLOP/s (+{:.0f}%)",
                            t.op, t.pass, t.impl, fmt::join(point, ", "), *t.time_us[c], tflops,
                            *peak, kPeakMargin * 100)},
           figure});
      return;
    }
    const double slowest = flops / (*peak * 1e12 * kSlowestShareOfPeak) + kSlowAllowanceSeconds;
    if (seconds > slowest) {
      out.problems.push_back(
          {{at, fmt::format("{} {} ({}) at ({}): {:g} us is slower than {:g} us, the time at "
                            "{:g}% of the GPU's peak plus {:g} ms: no working kernel",
                            t.op, t.pass, t.impl, fmt::join(point, ", "), *t.time_us[c],
                            slowest * 1e6, kSlowestShareOfPeak * 100, kSlowAllowanceSeconds * 1e3)},
           figure});
      return;
    }
  }
}

// The table's fastest cell (its launch floor), 0 when it has none.
double fastest_cell(const CalibrationTable& t) {
  double fastest = 0;
  for (const std::optional<double>& us : t.time_us) {
    if (us && (fastest == 0 || *us < fastest)) {
      fastest = *us;
    }
  }
  return fastest;
}

// Times that fall as one axis grows, the others fixed, by more than kFallTolerance and from a
// cell above kLaunchBoundFactor times the table's fastest: a warning per table, with the first.
void check_monotone(const CalibrationTable& t, std::size_t index, CalibrationFindings& out) {
  const double launch_bound = kLaunchBoundFactor * fastest_cell(t);
  std::size_t stride = 1;
  std::size_t falls = 0;
  std::string first;
  for (std::size_t j = t.axes.size(); j-- > 0;) {
    const std::size_t size = t.axes[j].values.size();
    for (std::size_t c = 0; c < t.time_us.size(); ++c) {
      const std::size_t i = (c / stride) % size;
      if (i + 1 >= size || !t.time_us[c] || !t.time_us[c + stride]) {
        continue;
      }
      if (*t.time_us[c] > launch_bound &&
          *t.time_us[c + stride] < *t.time_us[c] * (1 - kFallTolerance)) {
        if (falls++ == 0) {
          first = fmt::format(
              "{} {} ({}): {:g} us at {} = {}, {:g} us at {} = {} (cells {} and "
              "{})",
              t.op, t.pass, t.impl, *t.time_us[c], t.axes[j].name, t.axes[j].values[i],
              *t.time_us[c + stride], t.axes[j].name, t.axes[j].values[i + 1], c, c + stride);
        }
      }
    }
    stride *= size;
  }
  if (falls > 0) {
    out.warnings.push_back(
        {fmt::format("/tables/{}/time_us", index),
         fmt::format("the time falls as a shape grows in {} place(s), first {}; a bigger kernel "
                     "should not be faster",
                     falls, first)});
  }
}

void check_device(const Calibration& cal, const GpuFigures& gpu, CalibrationFindings& out) {
  if (cal.sm_count && gpu.sms && *cal.sm_count != *gpu.sms) {
    out.problems.push_back(
        {{"/device/sm_count",
          fmt::format("the table's device has {} SMs, the GPU {}", *cal.sm_count, *gpu.sms)},
         "sms"});
  }
  const auto ceiling = [&](const std::optional<double>& value, const std::optional<double>& peak,
                           std::string_view key, std::string_view unit, const char* figure) {
    if (value && peak && *value > *peak * (1 + kPeakMargin)) {
      out.problems.push_back(
          {{fmt::format("/device/ceilings/{}", key),
            fmt::format("{:g} {} measured, above the GPU's peak of {:g} {} (+{:.0f}%)", *value,
                        unit, *peak, unit, kPeakMargin * 100)},
           figure});
    }
  };
  ceiling(cal.ceilings.bf16_tflops, gpu.peak_bf16_tflops, "bf16_gemm_tflops", "TFLOP/s",
          "peak_bf16_tflops");
  ceiling(cal.ceilings.fp8_tflops, gpu.peak_fp8_tflops, "fp8_gemm_tflops", "TFLOP/s",
          "peak_fp8_tflops");
  ceiling(cal.ceilings.copy_GBps, gpu.hbm_GBps, "copy_GBps", "GB/s", "hbm_GBps");
  // cudaDeviceProp::totalGlobalMem against the cluster's (the same figure in the shipped
  // clusters: 85.0 GB for an "80 GB" H100, 150.1 GB for a "141 GB" H200).
  if (cal.hbm_bytes && gpu.hbm_GB) {
    const double ratio = *cal.hbm_bytes / (*gpu.hbm_GB * 1e9);
    if (ratio < 0.9 || ratio > 1.2) {
      out.problems.push_back(
          {{"/device/hbm_bytes", fmt::format("{:.4g} GB on the table's device, {:g} GB on the GPU",
                                             *cal.hbm_bytes / 1e9, *gpu.hbm_GB)},
           "hbm_GB"});
    }
  }
}

}  // namespace

double table_cell_flops(const CalibrationTable& t, std::span<const std::int64_t> point) {
  // A GEMM's backward: two of the forward, unless the table times one gradient ("role").
  const double bwd = t.pass == "bwd" && !t.variant.contains("role") ? 2.0 : 1.0;
  if (t.op == "gemm") {
    return bwd * gemm_flops(point[0], point[1], point[2]).n;
  }
  if (t.op == "grouped_gemm") {
    return bwd * grouped_gemm_flops(point[0], point[1], key_int(t, "n"), key_int(t, "k")).n;
  }
  if (t.op == "memory") {
    return static_cast<double>(point[0]);  // its work is the bytes it moves
  }
  AttentionShape s;
  s.d_qk = key_int(t, "d_qk");
  s.d_v = key_int(t, "d_v");
  s.mask = key_mask(t);
  s.s_q = point[0];
  s.s_kv = point[1];
  s.bh = point[2];
  return attention_flops(s, t.pass == "bwd" ? Pass::Bwd : Pass::Fwd).n;
}

CalibrationFindings check_plausible(const Calibration& cal, const GpuFigures& gpu) {
  CalibrationFindings out;
  check_device(cal, gpu, out);
  for (std::size_t i = 0; i < cal.tables.size(); ++i) {
    check_cells(cal.tables[i], i, gpu, out);
    check_monotone(cal.tables[i], i, out);
  }
  return out;
}

}  // namespace hopsim::work
