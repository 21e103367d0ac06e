// In-memory calibration tables: a rectilinear grid per (op, pass, impl, key), cells row-major.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/core/types.hpp"

namespace hopsim::calib {

inline constexpr const char* kSchema = "hopsim.calibration/1";

/// One numeric sweep dimension; values strictly ascending and positive.
struct Axis {
  std::string name;
  std::vector<double> values;

  friend bool operator==(const Axis&, const Axis&) = default;
};

/// Number of cells of a grid over `axes` (product of the axis sizes; 1 for no axes).
std::size_t cell_count(const std::vector<Axis>& axes);

/// Row-major cell index of per-axis value indices (the last axis varies fastest).
std::size_t cell_index(const std::vector<Axis>& axes, const std::vector<std::size_t>& idx);

/// Inverse of cell_index.
std::vector<std::size_t> cell_coords(const std::vector<Axis>& axes, std::size_t cell);

/// Axis values of a cell, in axis order.
std::vector<double> cell_values(const std::vector<Axis>& axes, std::size_t cell);

/// The axis names a table of `op` must have, in order.
std::vector<std::string> expected_axes(Op op);

/// What names a kernel family: a table's op, pass, implementation and categorical key.
struct TableFamily {
  Op op = Op::Gemm;
  Pass pass = Pass::Fwd;
  std::string impl;
  KeyMap key;
};

struct Table : TableFamily {
  std::vector<Axis> axes;
  std::string flops;
  std::vector<std::optional<double>> time_us;
  /// Either empty (not stored) or the same length as time_us.
  std::vector<std::optional<double>> p10_us;
  std::vector<std::optional<double>> p90_us;

  std::size_t measured_cells() const;
};

/// An empty table (every cell null) of the family of `like` (op, pass, impl, key, flops) over
/// `axes`.
Table empty_like(const Table& like, std::vector<Axis> axes);

/// Same op, pass, impl and categorical key: two tables describing the same kernel family.
bool same_family(const TableFamily& a, const TableFamily& b);

/// "attn/fwd/cudnn_composite {d_qk=128 ...}" for logs.
std::string describe(const Table& t);

struct CalibrationFile {
  std::string schema = kSchema;
  std::string created_utc;
  std::string source = "measured";
  nlohmann::json device = nlohmann::json::object();
  nlohmann::json method = nlohmann::json::object();
  std::vector<Table> tables;
};

/// The `method` object the harness writes (calibrate/README.md, "Timing").
nlohmann::json default_method();

/// Current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now();

}  // namespace hopsim::calib
