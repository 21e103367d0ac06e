// Enumerating grid points, sharding them, and the table-spec builders.
#include "calibrate/core/grid.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace hopsim::calib {
namespace {

std::vector<double> sorted_unique(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

bool parse_size(std::string_view s, std::size_t& out) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && !s.empty();
}

}  // namespace

std::size_t TableSpec::wanted_cells() const {
  if (wanted.empty()) {
    return cell_count(axes);
  }
  return static_cast<std::size_t>(std::count(wanted.begin(), wanted.end(), true));
}

std::vector<GridPoint> grid_points(const Grid& grid, Suite suite) {
  std::vector<GridPoint> points;
  for (std::size_t t = 0; t < grid.tables.size(); ++t) {
    const TableSpec& spec = grid.tables[t];
    if (!suite_includes(suite, spec.op)) {
      continue;
    }
    const std::size_t n = cell_count(spec.axes);
    for (std::size_t cell = 0; cell < n; ++cell) {
      if (spec.wants(cell)) {
        points.push_back({t, cell, cell_values(spec.axes, cell)});
      }
    }
  }
  return points;
}

Shard parse_shard(std::string_view text) {
  const std::size_t slash = text.find('/');
  Shard s;
  if (slash == std::string_view::npos || !parse_size(text.substr(0, slash), s.index) ||
      !parse_size(text.substr(slash + 1), s.count) || s.count == 0 || s.index >= s.count) {
    throw CalibError(fmt::format("--shard \"{}\": expected i/n with 0 <= i < n", text));
  }
  return s;
}

std::vector<GridPoint> shard_points(const std::vector<GridPoint>& points, Shard shard) {
  std::vector<GridPoint> out;
  for (std::size_t i = shard.index; i < points.size(); i += shard.count) {
    out.push_back(points[i]);
  }
  return out;
}

Table empty_table(const TableSpec& spec) {
  Table family;
  static_cast<TableFamily&>(family) = spec;
  family.flops = std::string(flops_formula(spec.op, spec.pass));
  return empty_like(family, spec.axes);
}

TableSpec gemm_spec(Dtype dtype, std::vector<double> m, std::vector<double> n,
                    std::vector<double> k) {
  TableSpec s;
  s.op = Op::Gemm;
  s.impl = "cublaslt";
  s.key = {{"dtype", std::string(to_string(dtype))}, {"layout", std::string("TN")}};
  s.axes = {{"m", sorted_unique(std::move(m))},
            {"n", sorted_unique(std::move(n))},
            {"k", sorted_unique(std::move(k))}};
  return s;
}

TableSpec wgrad_spec(Dtype dtype, std::vector<double> m, std::vector<double> n,
                     std::vector<double> k) {
  TableSpec s = gemm_spec(dtype, std::move(m), std::move(n), std::move(k));
  s.pass = Pass::Bwd;
  s.key.emplace("role", std::string("wgrad"));
  return s;
}

TableSpec grouped_spec(const GroupedFamily& family, std::vector<double> experts,
                       std::vector<double> tokens_per_expert) {
  TableSpec s;
  s.op = Op::GroupedGemm;
  s.pass = family.pass;
  s.impl = family.impl;
  s.key = {{"dtype", std::string(to_string(family.dtype))},
           {"n", family.n},
           {"k", family.k},
           {"imbalance", family.imbalance}};
  if (family.pass == Pass::Bwd) {
    // Only the weight-gradient GEMM is timed: say so, since a "bwd" table without a role is
    // the whole backward pass (data and weight gradients) to the simulator.
    s.key.emplace("role", std::string("wgrad"));
  }
  s.axes = {{"experts", sorted_unique(std::move(experts))},
            {"tokens_per_expert", sorted_unique(std::move(tokens_per_expert))}};
  return s;
}

TableSpec attn_spec(const AttnFamily& family,
                    const std::vector<std::pair<double, double>>& seq_pairs,
                    std::vector<double> bh) {
  TableSpec s;
  s.op = Op::Attn;
  s.pass = family.pass;
  s.impl = "cudnn_composite";
  s.key = {{"dtype", std::string("bf16")},
           {"d_qk", family.d_qk},
           {"d_v", family.d_v},
           {"mask", std::string(to_string(family.mask))},
           {"gqa", family.gqa}};
  std::vector<double> s_q;
  std::vector<double> s_kv;
  for (const auto& [q, kv] : seq_pairs) {
    s_q.push_back(q);
    s_kv.push_back(kv);
  }
  s.axes = {{"s_q", sorted_unique(s_q)},
            {"s_kv", sorted_unique(s_kv)},
            {"bh", sorted_unique(std::move(bh))}};
  s.wanted.assign(cell_count(s.axes), false);
  for (std::size_t cell = 0; cell < s.wanted.size(); ++cell) {
    const std::vector<double> v = cell_values(s.axes, cell);
    s.wanted[cell] =
        std::find(seq_pairs.begin(), seq_pairs.end(), std::pair{v[0], v[1]}) != seq_pairs.end();
  }
  return s;
}

TableSpec memory_spec(std::string_view kernel, Pass pass, std::vector<double> bytes) {
  TableSpec s;
  s.op = Op::Memory;
  s.pass = pass;
  s.impl = "hopsim_cuda";
  s.key = {{"dtype", std::string("bf16")}, {"kernel", std::string(kernel)}};
  s.axes = {{"bytes", sorted_unique(std::move(bytes))}};
  return s;
}

}  // namespace hopsim::calib
