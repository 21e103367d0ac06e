// Is a calibration table plausible for a GPU? Cells faster than the GPU's peak, or so slow that
// no working kernel takes that long; a device block that contradicts the GPU; times that fall
// as a shape grows.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "sim/problem.hpp"
#include "workloads/compute/calibration.hpp"

namespace hopsim::work {

/// The figures a table is held against: the cluster's GPU, or (without one) the table's own
/// measured ceilings. Unknown figures are not checked.
struct GpuFigures {
  std::optional<double> peak_bf16_tflops;
  std::optional<double> peak_fp8_tflops;
  std::optional<double> hbm_GBps;  // NOLINT(readability-identifier-naming): unit in the name
  std::optional<double> hbm_GB;    // NOLINT(readability-identifier-naming): unit in the name
  std::optional<int> sms;
  /// The peaks are lower bounds (a table's own measured ceilings): no cell is refused as
  /// faster than them, only as slower than any working kernel.
  bool peaks_are_lower_bounds = false;
};

/// A cell may be at most this much faster than the peak (the clock boosts a little above the
/// figure peaks are computed from; rounding in published tables).
inline constexpr double kPeakMargin = 0.05;
/// A cell may take at most its time at this share of the peak, plus kSlowAllowanceSeconds (the
/// launch and tail of a tiny kernel): slower is no measurement of a working kernel.
inline constexpr double kSlowestShareOfPeak = 1e-3;
inline constexpr double kSlowAllowanceSeconds = 1e-3;

/// A time that falls as a shape grows is a warning only when it falls by more than this share
/// (the spread of repeated timings)...
inline constexpr double kFallTolerance = 0.05;
/// ...from a cell slower than this many times the table's fastest: below it a kernel's time is
/// its launch and tail, and libraries switch algorithms there (XLA's H100 cuBLAS grid: 256 x 256
/// x 2048 in 8.6 us, x 4096 in 6.2 us with split-K, the fastest cell 5.2 us).
inline constexpr double kLaunchBoundFactor = 2.0;

/// A refused cell or device key, and the GPU figure it contradicts: the name of the GpuFigures
/// member, which is the cluster's gpu key ("hbm_GBps"); empty for none.
struct CalibrationProblem : Problem {
  std::string figure;
};

struct CalibrationFindings {
  /// Refused: under the table's pointers ("/tables/3/time_us/17").
  std::vector<CalibrationProblem> problems;
  Problems warnings;  ///< accepted, but worth a look (times that fall as a shape grows)
};

/// The FLOPs of the table's formula at one grid point (its axes' values), as lookups use them.
double table_cell_flops(const CalibrationTable& table, std::span<const std::int64_t> point);

/// Checks every cell and the device block of `calibration` against `gpu`.
CalibrationFindings check_plausible(const Calibration& calibration, const GpuFigures& gpu);

}  // namespace hopsim::work
