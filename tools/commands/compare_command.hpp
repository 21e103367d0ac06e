// `hopsim compare A.json B.json`: two reports (hopsim run --json or --out's report.json) side
// by side, with the change from A to B in each figure.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tools/commands/command.hpp"

namespace hopsim::tools {

struct CompareOptions {
  std::string a;
  std::string b;
  bool json = false;  ///< print the comparison as JSON
};

/// Per case (paired by name): step time, the busiest rank's compute, communication and exposed
/// communication, bytes over NVLink and InfiniBand, each phase's time, and the busiest links'
/// utilization (mean and peak), each {"a", "b", "change"} (change: (b - a) / a, null when a is
/// 0). Cases or phases only one report has are listed with the other side null. Throws
/// config::ConfigError naming the file when either is not a hopsim report.
nlohmann::ordered_json compare_reports(const nlohmann::ordered_json& a,
                                       const nlohmann::ordered_json& b);

/// Prints the comparison (a table, or JSON); returns 0. Throws config::ConfigError on an
/// unreadable file or one that is not a report.
int compare_command(const CompareOptions& options);

/// `hopsim compare A B`: its options, and compare_command.
Command declare_compare_command(CLI::App& program);

}  // namespace hopsim::tools
