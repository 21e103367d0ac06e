// What one `hopsim-calibrate` measuring run was asked to do.
#pragma once

#include <string>

#include "calibrate/core/grid.hpp"
#include "calibrate/core/measure.hpp"

namespace hopsim::calib {

struct RunOptions {
  std::string out;  ///< table path; empty only with check_only
  std::string grid = "smoke";
  Shard shard;
  std::string shard_text = "0/1";
  Suite suite = Suite::All;
  double budget_s = 0.0;  ///< wall-clock limit for timing; 0 = none
  bool check_only = false;
  MeasureConfig measure;
};

/// Measures on the local CUDA device; returns the process exit code (0 ok, 1 failed or no device).
/// Defined by the CUDA backend, or by a stub that explains that measuring needs a CUDA build.
int run_measurement(const RunOptions& options);

}  // namespace hopsim::calib
