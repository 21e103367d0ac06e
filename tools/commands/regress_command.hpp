// `hopsim regress`: rerun a suite of experiments and compare their predicted times with the
// expected reports, to gate a change (to the simulator, a cluster or a layout) in CI.
#pragma once

#include <string>

#include "tools/commands/command.hpp"

namespace hopsim::tools {

struct RegressOptions {
  /// A folder with suite.json ({"NAME": {"experiment": PATH, "set": [KEY=VALUE...]}}, paths
  /// relative to the folder) and NAME.json, the expected report of each.
  std::string dir = "tests/golden";
  double tolerance = 0.01;  ///< relative change in a step or phase time that fails
  bool update = false;      ///< rewrite the expected reports instead
  std::string junit;        ///< also write the results as JUnit XML to this file
};

/// Prints a table of expected, new and change per experiment (the headline: the last case's
/// step time), then a footer that tells step-time changes from phase-only ones; returns 1
/// when any step time or phase time changed by more than the tolerance (either way), a phase
/// appeared or vanished, or an entry has no expected report yet (the hint says --update),
/// else 0. Paths in suite.json are relative to its folder, so it runs from anywhere. Throws
/// config::ConfigError on a missing or malformed suite or expected report.
int regress_command(const RegressOptions& options);

/// `hopsim regress [DIR]`: its options, and regress_command.
Command declare_regress_command(CLI::App& program);

}  // namespace hopsim::tools
