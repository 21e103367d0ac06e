// Merging shard outputs (or any calibration files of one device) into one file.
//
// Tables of the same family (op, pass, impl, key) are combined on the union of their axis
// values; cells missing from an input stay null. When two inputs measured the same cell the
// sample with the smaller relative spread (p90 − p10) / median wins, and a note says so.
#pragma once

#include <string>
#include <vector>

#include "calibrate/core/table.hpp"

namespace hopsim::calib {

struct MergeResult {
  CalibrationFile file;
  /// Human-readable remarks: conflicting cells, differing method or device fields.
  std::vector<std::string> notes;
};

/// Throws CalibError when inputs are empty or disagree on device name, source or schema.
MergeResult merge_files(const std::vector<CalibrationFile>& inputs, const std::string& created_utc);

}  // namespace hopsim::calib
