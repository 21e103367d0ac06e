// A memory-bound kernel of op "memory" as one row: its name (the simulator's kernel class), the
// width it is timed at, and per pass its inputs and outputs (element type and count as functions
// of the rows and width), its bytes rule, its launch and its check against an FP64 reference.
// Declared together in one file per kernel (`calibrate/memory/<kernel>.cu`), the way nvbench
// declares a benchmark's traffic next to its launch; listed in `memory/rows.cpp`.
//
// Each row file is compiled by nvcc in a CUDA build and as C++ otherwise: there its device code
// and launches are left out (HOPSIM_MEMORY_LAUNCH gives null), and the grid, the dry run, the
// table reader and the CPU tests read the same rows.
//
// Bytes: the table's axis is `bytes` as the simulator's closed forms count them
// (workloads/costs/layer_kernels.hpp), a rule per row of `width`. Every buffer declares what one
// call moves of it (its size times `moves`); the rule must equal the sum over the buffers the
// closed form counts, and the rest (`counted = false`: a weight read once per call, per-group
// scales, row ids) must stay small beside it. tests/memory_kernel_test.cpp holds every row to
// both at the grids' points.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/core/types.hpp"

struct CUstream_st;  // what cudaStream_t points to, so that rows compile without CUDA

#ifdef __CUDACC__
#define HOPSIM_MEMORY_LAUNCH(fn) (fn)
#else
#define HOPSIM_MEMORY_LAUNCH(fn) nullptr
#endif

namespace hopsim::calib {

/// How the harness fills an input before timing or checking.
enum class Fill {
  Random,      ///< N(0, 1) from fill_random, seeded by the input's position
  RowShuffle,  ///< int32: a seeded permutation of 0 .. rows-1 (the permute's source rows)
  Targets,     ///< int32: seeded class ids in [0, width) (the cross-entropy's targets)
};

/// One input or output of a kernel.
struct MemoryBuffer {
  std::string_view name;
  Elem elem = Elem::Bf16;
  /// Elements at `rows` rows of `width`.
  std::int64_t (*count)(std::int64_t rows, std::int64_t width) = nullptr;
  /// How many times one call reads (or writes) all of it: the cross-entropy reads its logits
  /// twice.
  int moves = 1;
  /// False: traffic the simulator's closed form leaves out.
  bool counted = true;
  Fill fill = Fill::Random;  ///< inputs only; outputs are poisoned (NaN) before a run
};

/// Counts most buffers have: a value per element of every row, one value per row.
constexpr std::int64_t per_element(std::int64_t rows, std::int64_t width) {
  return rows * width;
}

constexpr std::int64_t per_row(std::int64_t rows, std::int64_t /*width*/) {
  return rows;
}

/// What a launch gets: the buffers in the row's order, the shape and the stream.
struct MemoryArgs {
  std::vector<const void*> in;
  std::vector<void*> out;
  std::int64_t rows = 0;
  std::int64_t width = 0;
  CUstream_st* stream = nullptr;

  template <typename T>
  const T* input(std::size_t i) const {
    return static_cast<const T*>(in.at(i));
  }

  template <typename T>
  T* output(std::size_t i) const {
    return static_cast<T*>(out.at(i));
  }
};

/// A pass's buffers after one run on the device, widened to double, for its check.
struct MemoryReadback {
  std::int64_t rows = 0;
  std::int64_t width = 0;
  std::function<std::vector<double>(std::size_t)> in;
  std::function<std::vector<double>(std::size_t)> out;
};

/// Queues the kernel on args.stream (launch errors are the caller's to collect).
using MemoryLaunchFn = void (*)(const MemoryArgs& args);
/// Compares the outputs with an FP64 reference, appending to `detail` (core/reference.hpp's
/// judge); false when one is out of tolerance.
using MemoryCheckFn = bool (*)(const MemoryReadback& run, std::string& detail);

/// The bytes a row of `width` moves as the simulator's closed form counts them:
/// per_element x width + per_row.
struct RowBytes {
  double per_element = 0;
  double per_row = 0;

  double at(std::int64_t width) const { return per_element * static_cast<double>(width) + per_row; }
};

/// One pass of a kernel. A pass that moves no bytes does not exist.
struct MemoryPass {
  std::span<const MemoryBuffer> in;
  std::span<const MemoryBuffer> out;
  RowBytes bytes;                   ///< the bytes rule
  std::int64_t width_multiple = 1;  ///< widths it runs at are multiples of this
  std::int64_t max_width = 0;       ///< and at most this (0: no limit)
  /// Rows timed are a multiple of this (the FP8 cast's 64-row tiles, whose transposed rows are
  /// 16-byte stores); any row count runs, the rest on a slower path.
  std::int64_t rows_multiple = 1;
  MemoryLaunchFn launch = nullptr;  ///< null without CUDA
  /// Null where the pass runs the other pass's kernel, checked there.
  MemoryCheckFn check = nullptr;

  bool exists() const { return bytes.at(1) > 0; }
};

/// A pass that runs the other pass's kernel (the residual add, the FP8 cast): its row without
/// the check, which the other pass holds.
constexpr MemoryPass same_kernel(MemoryPass p) {
  p.check = nullptr;
  return p;
}

/// A memory-bound kernel: both passes (a pass left out does not exist).
struct MemoryKernelRow {
  std::string_view name;         ///< the table's key "kernel", the simulator's class name
  std::int64_t width = 0;        ///< the row width timed
  std::int64_t check_width = 0;  ///< the row width checked, on kMemoryCheckRows rows
  MemoryPass fwd{};
  MemoryPass bwd{};

  const MemoryPass& pass(Pass p) const { return p == Pass::Fwd ? fwd : bwd; }
};

/// The rows a check runs on.
inline constexpr std::int64_t kMemoryCheckRows = 64;

/// An index or count as the host loops of the checks take it.
inline std::size_t as_size(std::int64_t v) {
  return static_cast<std::size_t>(v);
}

/// Check tolerances: BF16 outputs of FP32 arithmetic; FP8 E4M3 keeps 3 mantissa bits.
inline constexpr double kMemoryTolerance = 1e-2;
inline constexpr double kFp8Tolerance = 7e-2;

/// Every row, in the grids' order (memory/rows.cpp).
std::span<const MemoryKernelRow* const> memory_kernel_rows();

/// The row named `name`; CalibError naming the others for an unknown one.
const MemoryKernelRow& memory_kernel(std::string_view name);

/// The pass, checked: CalibError when the kernel has no such pass or cannot run `width` wide.
const MemoryPass& runnable_pass(const MemoryKernelRow& kernel, Pass pass, std::int64_t width);

/// Bytes a call over `rows` rows moves by the pass's rule.
double rule_bytes(const MemoryPass& pass, std::int64_t rows, std::int64_t width);

/// Bytes a call moves of the buffers the closed form counts (`counted`), or of the others.
double buffer_bytes(const MemoryPass& pass, std::int64_t rows, std::int64_t width, bool counted);

/// The rows to time so that the kernel moves about `bytes` by its rule, at its width: the
/// nearest multiple of the pass's rows_multiple (at least one).
std::int64_t memory_rows(const MemoryKernelRow& kernel, Pass pass, double bytes);

/// The int32 ids of an input filled by `fill` (RowShuffle or Targets).
std::vector<std::int32_t> memory_ids(Fill fill, std::int64_t rows, std::int64_t width);

}  // namespace hopsim::calib
