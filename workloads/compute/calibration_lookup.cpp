// Multilinear interpolation of log-throughput over the enclosing cell of a calibration grid.
#include "workloads/compute/calibration_lookup.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "sim/problem.hpp"

namespace hopsim::work {
namespace {

// Where a query falls along one axis: between values[lo] and values[hi] at fraction t of the
// way in log2 space (lo == hi on a grid value or when clamped to the last one).
struct Bracket {
  std::size_t lo = 0;
  std::size_t hi = 0;
  double t = 0;
};

enum class Placement { Below, OnGrid, Between, Above };

Placement place(const std::vector<std::int64_t>& values, std::int64_t q, Bracket& b) {
  if (q < values.front()) {
    return Placement::Below;
  }
  if (q >= values.back()) {
    b.lo = b.hi = values.size() - 1;
    return q == values.back() ? Placement::OnGrid : Placement::Above;
  }
  const auto it = std::lower_bound(values.begin(), values.end(), q);
  const auto i = static_cast<std::size_t>(std::distance(values.begin(), it));
  if (*it == q) {
    b.lo = b.hi = i;
    return Placement::OnGrid;
  }
  b.lo = i - 1;
  b.hi = i;
  const double lo = std::log2(static_cast<double>(values[b.lo]));
  const double hi = std::log2(static_cast<double>(values[b.hi]));
  b.t = (std::log2(static_cast<double>(q)) - lo) / (hi - lo);
  return Placement::Between;
}

Time kernel_time(const CalibrationTable& table, double seconds) {
  if (!(seconds <= kMaxKernelSeconds)) {
    throw LimitError("/calibration",
                     fmt::format("table \"{}\" ({}) gives {:.3g} s for one kernel call; at most "
                                 "{:.0e} s per call can be simulated",
                                 table.op, table.impl, seconds, kMaxKernelSeconds));
  }
  return Time::from_seconds_ceil(seconds);
}

Time exact_time(const CalibrationTable& table, double us) {
  kernel_time(table, us * 1e-6);                // bounded first
  return Time::ps(std::llround(us * 1e6));  // tables hold at most picosecond precision
}

// Where a query point sits on each axis: its bracket, the axes interpolated between two
// values, and whether any axis is clamped above the grid; nullopt below the grid.
struct Located {
  std::vector<Bracket> brackets;
  std::vector<std::size_t> free_axes;
  bool clamped = false;
};

std::optional<Located> locate(const CalibrationTable& table, std::span<const std::int64_t> point) {
  const std::size_t d = table.axes.size();
  Located at;
  at.brackets.resize(d);
  for (std::size_t j = 0; j < d; ++j) {
    switch (place(table.axes[j].values, point[j], at.brackets[j])) {
      case Placement::Below:
        return std::nullopt;
      case Placement::Above:
        at.clamped = true;
        break;
      case Placement::Between:
        at.free_axes.push_back(j);
        break;
      case Placement::OnGrid:
        break;
    }
  }
  return at;
}

}  // namespace

std::optional<TableAnswer> lookup_table(const CalibrationTable& table,
                                        std::span<const std::int64_t> point, const WorkAt& work) {
  const std::size_t d = table.axes.size();
  HOPSIM_ASSERT(point.size() == d, "query has {} coordinates, table {} has {} axes", point.size(),
                table.op, d);
  const std::optional<Located> at = locate(table, point);
  if (!at) {
    return std::nullopt;
  }
  const std::vector<Bracket>& brackets = at->brackets;
  const std::vector<std::size_t>& free_axes = at->free_axes;
  const bool clamped = at->clamped;
  std::vector<std::size_t> stride(d);
  std::size_t cells = 1;
  for (std::size_t j = d; j-- > 0;) {
    stride[j] = cells;
    cells *= table.axes[j].values.size();
  }

  std::vector<std::int64_t> corner(d);
  double log_theta = 0;
  const std::size_t corners = std::size_t{1} << free_axes.size();
  for (std::size_t c = 0; c < corners; ++c) {
    std::vector<std::size_t> index(d);
    for (std::size_t j = 0; j < d; ++j) {
      index[j] = brackets[j].lo;
    }
    double weight = 1;
    for (std::size_t f = 0; f < free_axes.size(); ++f) {
      const Bracket& b = brackets[free_axes[f]];
      const bool upper = ((c >> f) & 1U) != 0;
      index[free_axes[f]] = upper ? b.hi : b.lo;
      weight *= upper ? b.t : 1 - b.t;
    }
    std::size_t flat = 0;
    for (std::size_t j = 0; j < d; ++j) {
      flat += index[j] * stride[j];
      corner[j] = table.axes[j].values[index[j]];
    }
    const std::optional<double>& us = table.time_us[flat];
    if (!us) {
      return std::nullopt;
    }
    if (corners == 1 && !clamped) {
      return TableAnswer{exact_time(table, *us), Source::Exact};
    }
    log_theta += weight * std::log(work(corner) / (*us * 1e-6));
  }
  const double seconds = work(point) / std::exp(log_theta);
  return TableAnswer{kernel_time(table, seconds),
                     clamped ? Source::Clamped : Source::Interpolated};
}

void check_table(const CalibrationTable& table) {
  const auto names = calibration_axes(table.op);
  HOPSIM_ASSERT(!names.empty(), "calibration table has unknown op \"{}\"", table.op);
  HOPSIM_ASSERT(table.axes.size() == names.size(), "{} table ({}) has {} axes, expected {}",
                table.op, table.impl, table.axes.size(), names.size());
  for (std::size_t j = 0; j < names.size(); ++j) {
    const CalibrationAxis& axis = table.axes[j];
    HOPSIM_ASSERT(axis.name == names[j], "{} table ({}) axis {} is \"{}\", expected \"{}\"",
                  table.op, table.impl, j, axis.name, names[j]);
    HOPSIM_ASSERT(!axis.values.empty() && axis.values.front() > 0,
                  "{} table ({}) axis \"{}\" must have positive values", table.op, table.impl,
                  axis.name);
    HOPSIM_ASSERT(std::adjacent_find(axis.values.begin(), axis.values.end(),
                                     [](std::int64_t a, std::int64_t b) { return a >= b; }) ==
                      axis.values.end(),
                  "{} table ({}) axis \"{}\" is not strictly ascending", table.op, table.impl,
                  axis.name);
  }
  HOPSIM_ASSERT(table.time_us.size() == table.cell_count(),
                "{} table ({}) has {} times for {} cells", table.op, table.impl,
                table.time_us.size(), table.cell_count());
  for (const std::optional<double>& us : table.time_us) {
    HOPSIM_ASSERT(!us || (*us > 0 && std::isfinite(*us)), "{} table ({}) has time {} us", table.op,
                  table.impl, us.value_or(0));
  }
}

}  // namespace hopsim::work
