// Calibration tables: kernel times measured or published for one GPU, as plain data (no JSON).
//
// A table holds one op (gemm, grouped_gemm, attn, memory) and pass (fwd, bwd) of one
// implementation,
// for one categorical key (dtype, head dims, ...), over a rectilinear grid of numeric axes.
// The axes of each op, in the order the grid is laid out (row-major, the last axis fastest):
//   gemm          key {dtype}                          axes m, n, k
//   grouped_gemm  key {dtype, n, k}                    axes experts, tokens_per_expert
//   attn          key {dtype, d_qk, d_v, mask, gqa}    axes s_q, s_kv, bh
//   memory        key {dtype, kernel}                  axes bytes
// A memory table times one memory-bound kernel class (kernel: "norm", "fp8_cast", ...; dtype:
// its activations') by the bytes it moves as costs/layer_kernels.hpp counts them ("bytes_v1").
// The file format is configs/calibration/*.json, read by tools/config/calibration_config.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hopsim::work {

/// One numeric sweep dimension; values are positive and strictly ascending.
struct CalibrationAxis {
  std::string name;
  std::vector<std::int64_t> values;
};

/// The datasheet figures of the GPU a table was made on, when the cluster's GPU is another one:
/// the table's times are scaled to the cluster's (compute_model.hpp).
struct TableScaling {
  double bf16_tflops = 0;
  double fp8_tflops = 0;
  double hbm_GBps = 0;  // NOLINT(readability-identifier-naming): unit in the name
};

struct CalibrationTable {
  std::string op;    ///< "gemm", "grouped_gemm", "attn" or "memory"
  std::string pass;  ///< "fwd" or "bwd"
  std::string impl;  ///< the kernel or library, e.g. "cublas", "fa3"
  /// Categorical parameters; integers are stored as their decimal text ("128").
  std::map<std::string, std::string> key;
  /// Optional descriptive keys that do not select a query: "layout" (gemm), "imbalance"
  /// (grouped_gemm: "uniform" or "rampR") and "role" (grouped_gemm: "wgrad" when a bwd table
  /// times the weight gradient only). The model uses uniform tables without a role.
  std::map<std::string, std::string> variant;
  std::vector<CalibrationAxis> axes;
  /// Kernel time per grid cell in microseconds, row-major over `axes`; nullopt: no data.
  std::vector<std::optional<double>> time_us;
  std::string flops;  ///< the FLOP formula the cells were measured against, e.g. "gemm_v1"
  std::optional<std::string> citation;  ///< where published numbers come from
  /// 0: the file's own table; 1: a table of the file's `base`, which answers only where none
  /// of the file's own does; 2: of the base's base, where neither answers; and so on.
  int tier = 0;
  /// A base table made on another GPU than the cluster's: that GPU's figures, to scale by.
  std::optional<TableScaling> scaling;

  /// The number of grid cells: the product of the axis sizes.
  std::size_t cell_count() const;
  /// The grid point of cell `cell` (row-major, the last axis fastest), one value per axis.
  std::vector<std::int64_t> cell_point(std::size_t cell) const;
};

/// Ceilings measured on the device (optional; informational for the compute model).
struct CalibrationCeilings {
  std::optional<double> bf16_tflops;
  std::optional<double> fp8_tflops;
  std::optional<double> copy_GBps;  // NOLINT(readability-identifier-naming): unit in the name
};

/// The device's datasheet figures (optional): what lets another GPU use the table, its
/// times scaled by the figure that bounds each (TableScaling, compute_model.hpp).
struct CalibrationPeaks {
  std::optional<double> bf16_tflops;
  std::optional<double> fp8_tflops;
  std::optional<double> fp4_tflops;  ///< dense NVFP4, where the GPU has it (no table scales by it)
  std::optional<double> hbm_GBps;  // NOLINT(readability-identifier-naming): unit in the name
  bool complete() const { return bf16_tflops && fp8_tflops && hbm_GBps; }
  /// What a table made on this GPU is scaled by on another; complete() must hold.
  TableScaling scaling() const { return {*bf16_tflops, *fp8_tflops, *hbm_GBps}; }
};

struct Calibration {
  std::string source;  ///< "measured" or "published"
  std::string device;  ///< the device's name, e.g. "NVIDIA H100 80GB HBM3"
  /// GPU models with the same SMs and clocks that may use the table too (H800 for H100).
  std::vector<std::string> equivalent_gpus;
  CalibrationCeilings ceilings;
  CalibrationPeaks peaks;
  std::optional<std::int64_t> sm_count;  ///< the device's SMs, where the file says
  std::optional<double> hbm_bytes;       ///< the device's memory in bytes, where the file says
  /// The calibration this one falls back on (a shipped table's name, such as "h100-published"),
  /// whose tables follow the file's own in `tables` with tier 1 (its own base's with tier 2, and
  /// so on); empty: none.
  std::string base;
  /// Whether "calibration": "auto" may choose the table (the file's `auto`; false: only
  /// experiments that name it use it).
  bool automatic = true;
  /// When several tables share op, pass and key (different impls), the model answers from
  /// the one with the best source, the earliest in this list among equals; a base's tables
  /// only where no table of the file's own answers.
  std::vector<CalibrationTable> tables;
};

/// "dtype=bf16 layout=TN role=wgrad": a table's key, then its variant.
std::string table_key(const CalibrationTable& table);

/// "gemm bwd cublaslt dtype=bf16 layout=TN role=wgrad": a table's op, pass, impl, key and
/// variant: its family.
std::string table_family(const CalibrationTable& table);

/// The axis names of `op`, in grid order; empty for an unknown op.
std::span<const std::string_view> calibration_axes(std::string_view op);
/// The key names `op` requires; empty for an unknown op.
std::span<const std::string_view> calibration_keys(std::string_view op);
/// The FLOP formula a table of `op` and `pass` must name ("gemm_v1", "attn_bwd_v1", ...);
/// empty for an unknown op.
std::string_view calibration_flops(std::string_view op, std::string_view pass);

}  // namespace hopsim::work
