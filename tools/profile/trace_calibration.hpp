// A calibration table from a profiler trace (hopsim profile-check --write-calibration): the
// kernels whose class a rule names alone and whose launching operator recorded its shapes
// (record_shapes=True) become cells of the format calibrate/ writes, each the mean time of its
// kernels. GEMMs (fprop, dgrad, wgrad) from aten::mm, addmm, matmul and linear, and norms from
// their operator's input; other classes are left to the table's base.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tools/profile/kernel_rules.hpp"
#include "tools/profile/kineto_trace.hpp"

namespace hopsim::profile {

struct TraceCalibration {
  nlohmann::ordered_json file;  ///< the table file (schema hopsim.calibration/1)
  std::size_t kernels = 0;      ///< kernels that became cells
  std::size_t cells = 0;
  /// Kernels of a compute class left out, by why: "no shapes" (no linked operator with
  /// Input Dims), "ambiguous class" (a rule names several), "class not written", "dtype".
  std::map<std::string, std::size_t> left_out;
};

struct TraceCalibrationOptions {
  std::string trace;   ///< the trace's file, cited as the table's source
  std::string base;    ///< a shipped table for what the trace does not time; empty: none
  std::optional<std::int64_t> device;  ///< only this GPU's kernels
  std::string created_utc;
};

/// Throws config::ConfigError when no kernel becomes a cell (saying why they were left out).
TraceCalibration calibration_from_trace(const KinetoTrace& trace, const KernelRules& rules,
                                        const TraceCalibrationOptions& options);

}  // namespace hopsim::profile
