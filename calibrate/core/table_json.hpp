// JSON form of calibration files (schema hopsim.calibration/1): writer and validating reader.
//
// Axes are an array of {"name", "values"} objects, not an object keyed by name, because JSON
// object member order is not preserved by every reader and row-major order must be unambiguous.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/core/table.hpp"

namespace hopsim::calib {

nlohmann::json to_json(const CalibrationFile& file);

/// Validates and converts; errors throw CalibError as "`origin`: /json/pointer: what is wrong".
CalibrationFile from_json(const nlohmann::json& j, const std::string& origin);

/// Checks an in-memory file against the same rules the reader applies.
void validate(const CalibrationFile& file);

CalibrationFile read_calibration_file(const std::filesystem::path& path);

/// Validates, then writes pretty JSON (via a temporary file renamed into place).
void write_calibration_file(const std::filesystem::path& path, const CalibrationFile& file);

}  // namespace hopsim::calib
