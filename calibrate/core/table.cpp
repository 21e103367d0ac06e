// Row-major cell addressing and small helpers of calibration tables.
#include "calibrate/core/table.hpp"

#include <algorithm>
#include <ctime>
#include <utility>

#include <fmt/format.h>

namespace hopsim::calib {

std::size_t cell_count(const std::vector<Axis>& axes) {
  std::size_t n = 1;
  for (const Axis& a : axes) {
    n *= a.values.size();
  }
  return n;
}

std::size_t cell_index(const std::vector<Axis>& axes, const std::vector<std::size_t>& idx) {
  if (idx.size() != axes.size()) {
    throw CalibError(
        fmt::format("cell index has {} coordinates, table has {} axes", idx.size(), axes.size()));
  }
  std::size_t cell = 0;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    if (idx[a] >= axes[a].values.size()) {
      throw CalibError(fmt::format("axis {} index {} out of range", axes[a].name, idx[a]));
    }
    cell = cell * axes[a].values.size() + idx[a];
  }
  return cell;
}

std::vector<std::size_t> cell_coords(const std::vector<Axis>& axes, std::size_t cell) {
  std::vector<std::size_t> idx(axes.size());
  for (std::size_t a = axes.size(); a-- > 0;) {
    const std::size_t n = axes[a].values.size();
    idx[a] = cell % n;
    cell /= n;
  }
  return idx;
}

std::vector<double> cell_values(const std::vector<Axis>& axes, std::size_t cell) {
  const std::vector<std::size_t> idx = cell_coords(axes, cell);
  std::vector<double> v(axes.size());
  for (std::size_t a = 0; a < axes.size(); ++a) {
    v[a] = axes[a].values[idx[a]];
  }
  return v;
}

std::vector<std::string> expected_axes(Op op) {
  switch (op) {
    case Op::Gemm:
      return {"m", "n", "k"};
    case Op::GroupedGemm:
      return {"experts", "tokens_per_expert"};
    case Op::Attn:
      return {"s_q", "s_kv", "bh"};
    case Op::Memory:
      return {"bytes"};
  }
  return {};
}

std::size_t Table::measured_cells() const {
  return static_cast<std::size_t>(
      std::count_if(time_us.begin(), time_us.end(), [](const auto& t) { return t.has_value(); }));
}

bool same_family(const TableFamily& a, const TableFamily& b) {
  return a.op == b.op && a.pass == b.pass && a.impl == b.impl && a.key == b.key;
}

std::string describe(const Table& t) {
  return fmt::format("{}/{}/{} {{{}}}", to_string(t.op), to_string(t.pass), t.impl,
                     key_to_string(t.key));
}

nlohmann::json default_method() {
  return {{"timer", "cuda_events"},
          {"l2_flush", "memset_256MB"},
          {"warmup_ms", 25},
          {"min_samples", 10},
          {"statistic", "median"}};
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Table empty_like(const Table& like, std::vector<Axis> axes) {
  Table t;
  static_cast<TableFamily&>(t) = like;
  t.flops = like.flops;
  t.axes = std::move(axes);
  const std::size_t n = cell_count(t.axes);
  t.time_us.assign(n, std::nullopt);
  t.p10_us.assign(n, std::nullopt);
  t.p90_us.assign(n, std::nullopt);
  return t;
}

}  // namespace hopsim::calib
