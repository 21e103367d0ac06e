// Shape grids (`smoke`, `full`), the points a run measures, and their partition into shards.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/core/table.hpp"

namespace hopsim::calib {

/// One table to fill: its family, its axes, and which cells to measure (row-major).
struct TableSpec : TableFamily {
  std::vector<Axis> axes;
  /// Empty = every cell; otherwise one flag per cell (e.g. only the diagonal of a causal grid).
  std::vector<bool> wanted;

  bool wants(std::size_t cell) const { return wanted.empty() || wanted[cell]; }

  std::size_t wanted_cells() const;
};

struct Grid {
  std::string name;
  std::vector<TableSpec> tables;
};

/// One measurement: a cell of a table of the grid.
struct GridPoint {
  std::size_t table = 0;
  std::size_t cell = 0;
  std::vector<double> values;  ///< axis values of the cell, in axis order

  friend bool operator==(const GridPoint&, const GridPoint&) = default;
};

/// `i/n`: this run measures the points whose index in grid order is ≡ i (mod n).
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
};

/// "smoke" or "full" (calibrate/README.md); throws CalibError otherwise.
Grid make_grid(std::string_view name);

/// Every wanted cell of tables in `suite`, table by table, cells in row-major order.
std::vector<GridPoint> grid_points(const Grid& grid, Suite suite);

/// Parses "i/n" with 0 ≤ i < n; throws CalibError otherwise.
Shard parse_shard(std::string_view text);

/// The points of shard `shard`; the shards 0..n−1 partition `points`.
std::vector<GridPoint> shard_points(const std::vector<GridPoint>& points, Shard shard);

/// An all-null table for `spec` with its FLOP formula filled in.
Table empty_table(const TableSpec& spec);

/// Builders used by the grid definitions.
TableSpec gemm_spec(Dtype dtype, std::vector<double> m, std::vector<double> n,
                    std::vector<double> k);
/// A dense weight gradient dW[m x n] += Xᵀ·dY over k tokens, FP32 accumulated: a bwd gemm table
/// of role wgrad, whose (m, n, k) the simulator asks at (input features, outputs, tokens).
TableSpec wgrad_spec(Dtype dtype, std::vector<double> m, std::vector<double> n,
                     std::vector<double> k);

/// Expert GEMM family: per expert `tokens × n × k`, tokens split by `imbalance`.
struct GroupedFamily {
  Dtype dtype = Dtype::Bf16;
  std::string impl = "lt_loop_1s";
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::string imbalance = "uniform";
  Pass pass = Pass::Fwd;
};

TableSpec grouped_spec(const GroupedFamily& family, std::vector<double> experts,
                       std::vector<double> tokens_per_expert);

/// Attention table over the given (s_q, s_kv) pairs and bh values; the axes are the sorted union
/// of the pair coordinates, and only the listed pairs (times every bh) are wanted.
struct AttnFamily {
  Pass pass = Pass::Fwd;
  std::int64_t d_qk = 128;
  std::int64_t d_v = 128;
  Mask mask = Mask::None;
  std::int64_t gqa = 1;
};

TableSpec attn_spec(const AttnFamily& family,
                    const std::vector<std::pair<double, double>>& seq_pairs,
                    std::vector<double> bh);

/// A memory-bound kernel's table over the bytes it moves (the harness's own CUDA kernels).
TableSpec memory_spec(std::string_view kernel, Pass pass, std::vector<double> bytes);

}  // namespace hopsim::calib
