// The schema of calibration tables: each op's axes, key names and FLOP formula.
#include "workloads/compute/calibration.hpp"

#include <array>

#include <fmt/format.h>

namespace hopsim::work {
namespace {

constexpr std::array<std::string_view, 3> kGemmAxes{"m", "n", "k"};
constexpr std::array<std::string_view, 2> kGroupedAxes{"experts", "tokens_per_expert"};
constexpr std::array<std::string_view, 3> kAttnAxes{"s_q", "s_kv", "bh"};
constexpr std::array<std::string_view, 1> kGemmKeys{"dtype"};
constexpr std::array<std::string_view, 3> kGroupedKeys{"dtype", "n", "k"};
constexpr std::array<std::string_view, 5> kAttnKeys{"dtype", "d_qk", "d_v", "mask", "gqa"};
constexpr std::array<std::string_view, 1> kMemoryAxes{"bytes"};
constexpr std::array<std::string_view, 2> kMemoryKeys{"dtype", "kernel"};

}  // namespace

std::size_t CalibrationTable::cell_count() const {
  std::size_t cells = 1;
  for (const CalibrationAxis& axis : axes) {
    cells *= axis.values.size();
  }
  return cells;
}

std::vector<std::int64_t> CalibrationTable::cell_point(std::size_t cell) const {
  std::vector<std::int64_t> point(axes.size());
  for (std::size_t j = axes.size(); j-- > 0;) {
    const std::size_t size = axes[j].values.size();
    point[j] = axes[j].values[cell % size];
    cell /= size;
  }
  return point;
}

std::string table_key(const CalibrationTable& table) {
  std::string out;
  for (const auto* part : {&table.key, &table.variant}) {
    for (const auto& [k, v] : *part) {
      out += fmt::format("{}{}={}", out.empty() ? "" : " ", k, v);
    }
  }
  return out;
}

std::string table_family(const CalibrationTable& table) {
  return fmt::format("{} {} {} {}", table.op, table.pass, table.impl, table_key(table));
}

std::span<const std::string_view> calibration_axes(std::string_view op) {
  if (op == "gemm") {
    return kGemmAxes;
  }
  if (op == "grouped_gemm") {
    return kGroupedAxes;
  }
  if (op == "attn") {
    return kAttnAxes;
  }
  if (op == "memory") {
    return kMemoryAxes;
  }
  return {};
}

std::span<const std::string_view> calibration_keys(std::string_view op) {
  if (op == "gemm") {
    return kGemmKeys;
  }
  if (op == "grouped_gemm") {
    return kGroupedKeys;
  }
  if (op == "attn") {
    return kAttnKeys;
  }
  if (op == "memory") {
    return kMemoryKeys;
  }
  return {};
}

std::string_view calibration_flops(std::string_view op, std::string_view pass) {
  if (op == "gemm") {
    return "gemm_v1";
  }
  if (op == "grouped_gemm") {
    return "grouped_gemm_v1";
  }
  if (op == "attn") {
    return pass == "bwd" ? "attn_bwd_v1" : "attn_fwd_v1";
  }
  if (op == "memory") {
    return "bytes_v1";
  }
  return {};
}

}  // namespace hopsim::work
