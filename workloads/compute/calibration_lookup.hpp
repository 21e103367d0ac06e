// Throughput interpolation inside one calibration table (the maths is in compute_model.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "sim/units.hpp"
#include "workloads/compute/calibration.hpp"
#include "workloads/compute/compute_model.hpp"

namespace hopsim::work {

/// The work (FLOPs) of the queried kernel at a point given in the table's axis order.
using WorkAt = std::function<double(std::span<const std::int64_t>)>;

struct TableAnswer {
  Time time;
  Source source = Source::Exact;  ///< Exact, Interpolated or Clamped
};

/// The table's time at `point` (one value per axis, in the table's order): the cell's own time
/// at a grid point; else work(point) / theta with log(theta) interpolated in log2 of the axes
/// and clamped above the largest values. Nullopt below the smallest value of an axis, or when a
/// corner of the enclosing cell has no data.
std::optional<TableAnswer> lookup_table(const CalibrationTable& table,
                                        std::span<const std::int64_t> point, const WorkAt& work);

/// Asserts what the lookup relies on: the op's axes in order, positive ascending values, one
/// time per cell, times positive.
void check_table(const CalibrationTable& table);

}  // namespace hopsim::work
