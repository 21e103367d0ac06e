// `hopsim profile-check TRACE EXPERIMENT`: a PyTorch profiler trace of a real step beside
// hopsim's prediction for the experiment meant to describe it, kernel class by kernel class
// (docs/profile-check.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/commands/command.hpp"
#include "tools/profile/profile_check.hpp"

namespace hopsim::tools {

struct ProfileCheckOptions {
  std::string trace;
  std::string experiment;
  std::vector<std::string> overrides;  ///< --set KEY=VALUE, applied to the experiment
  std::string rules;                   ///< empty: the shipped rules
  std::string case_name;               ///< empty: the experiment's only case
  std::int64_t steps = 0;              ///< 0: the trace's ProfilerStep#N annotations
  std::optional<std::int64_t> device;  ///< unset: every GPU in the trace
  std::int64_t unmatched = 5;          ///< unclassified kernel names listed
  bool json = false;
  /// Write the trace's GEMM and norm kernels as a calibration table here (empty: no table).
  std::string write_calibration;
};

/// The check as JSON: the trace, the rules, the case, each row with the ratio hopsim / trace,
/// the totals and the unclassified kernels.
nlohmann::ordered_json profile_check_json(const profile::ProfileCheck& check,
                                          const ProfileCheckOptions& o);

/// Runs the experiment and prints the check (a table, or JSON). Returns 0; bad input is a
/// config::ConfigError naming the file.
int profile_check_command(const ProfileCheckOptions& options);

/// `hopsim profile-check TRACE EXPERIMENT`: its options, and profile_check_command.
Command declare_profile_check_command(CLI::App& program);

}  // namespace hopsim::tools
