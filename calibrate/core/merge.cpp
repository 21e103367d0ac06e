// Union of axis values per table family, cell-wise combination with conflict notes.
#include "calibrate/core/merge.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace hopsim::calib {
namespace {

std::vector<double> union_values(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

double relative_spread(const Table& t, std::size_t cell) {
  if (t.p10_us.empty() || t.p90_us.empty() || !t.p10_us[cell] || !t.p90_us[cell] ||
      !t.time_us[cell] || *t.time_us[cell] <= 0.0) {
    return std::numeric_limits<double>::infinity();
  }
  return (*t.p90_us[cell] - *t.p10_us[cell]) / *t.time_us[cell];
}

/// Index of `v` in sorted `values` (present by construction).
std::size_t position(const std::vector<double>& values, double v) {
  return static_cast<std::size_t>(std::lower_bound(values.begin(), values.end(), v) -
                                  values.begin());
}

void copy_cells(const Table& from, Table& into, std::vector<std::string>& notes) {
  for (std::size_t cell = 0; cell < from.time_us.size(); ++cell) {
    if (!from.time_us[cell]) {
      continue;
    }
    const std::vector<double> values = cell_values(from.axes, cell);
    std::vector<std::size_t> idx(values.size());
    for (std::size_t a = 0; a < values.size(); ++a) {
      idx[a] = position(into.axes[a].values, values[a]);
    }
    const std::size_t target = cell_index(into.axes, idx);
    if (into.time_us[target]) {
      const bool replace = relative_spread(from, cell) < relative_spread(into, target);
      notes.push_back(fmt::format("{}: cell {} measured twice ({} us vs {} us), kept the {}",
                                  describe(into), fmt::join(values, ","), *into.time_us[target],
                                  *from.time_us[cell], replace ? "second (less noise)" : "first"));
      if (!replace) {
        continue;
      }
    }
    into.time_us[target] = from.time_us[cell];
    into.p10_us[target] = from.p10_us.empty() ? std::nullopt : from.p10_us[cell];
    into.p90_us[target] = from.p90_us.empty() ? std::nullopt : from.p90_us[cell];
  }
}

void merge_table(const Table& t, std::vector<Table>& out, std::vector<std::string>& notes) {
  const auto it =
      std::find_if(out.begin(), out.end(), [&](const Table& o) { return same_family(o, t); });
  if (it == out.end()) {
    Table fresh = empty_like(t, t.axes);
    copy_cells(t, fresh, notes);
    out.push_back(std::move(fresh));
    return;
  }
  std::vector<Axis> axes = it->axes;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    axes[a].values = union_values(axes[a].values, t.axes[a].values);
  }
  if (axes != it->axes) {
    Table grown = empty_like(t, axes);
    copy_cells(*it, grown, notes);
    *it = std::move(grown);
  }
  copy_cells(t, *it, notes);
}

}  // namespace

MergeResult merge_files(const std::vector<CalibrationFile>& inputs,
                        const std::string& created_utc) {
  if (inputs.empty()) {
    throw CalibError("merge needs at least one input");
  }
  MergeResult r;
  const CalibrationFile& first = inputs.front();
  r.file.schema = first.schema;
  r.file.created_utc = created_utc;
  r.file.source = first.source;
  r.file.device = first.device;
  r.file.method = first.method;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const CalibrationFile& in = inputs[i];
    if (in.schema != first.schema || in.source != first.source) {
      throw CalibError(fmt::format("merge input {}: schema/source {}/{} differ from {}/{}", i,
                                   in.schema, in.source, first.schema, first.source));
    }
    if (in.device.value("name", "") != first.device.value("name", "")) {
      throw CalibError(fmt::format("merge input {}: device \"{}\" differs from \"{}\"", i,
                                   in.device.value("name", ""), first.device.value("name", "")));
    }
    if (in.device != first.device) {
      r.notes.push_back(
          fmt::format("input {}: device details differ from input 0; kept input 0's", i));
    }
    if (in.method != first.method) {
      r.notes.push_back(fmt::format("input {}: method differs from input 0; kept input 0's", i));
    }
    for (const Table& t : in.tables) {
      merge_table(t, r.file.tables, r.notes);
    }
  }
  for (Table& t : r.file.tables) {
    const bool any_spread =
        std::any_of(t.p10_us.begin(), t.p10_us.end(), [](const auto& c) { return c.has_value(); });
    if (!any_spread) {
      t.p10_us.clear();
      t.p90_us.clear();
    }
  }
  return r;
}

}  // namespace hopsim::calib
