// `hopsim export-chakra EXPERIMENT --out DIR`: what hopsim simulated for an experiment, written
// as Chakra execution traces (one file per GPU) with an experiment that replays them.
#pragma once

#include <string>
#include <vector>

#include "tools/commands/command.hpp"

namespace hopsim::tools {

struct ExportChakraOptions {
  std::string experiment;
  std::vector<std::string> overrides;  ///< --set KEY=VALUE
  std::string out;                     ///< the folder (made if missing)
  std::string case_name;               ///< empty: the experiment's only case
};

/// Runs the experiment, writes DIR/NAME.<rank>.et for each GPU of the case's plan and
/// DIR/NAME.json (the chakra experiment on the same cluster), and prints what it wrote.
/// Returns 0; bad input is a config::ConfigError, an unwritable folder an OutputError.
int export_chakra_command(const ExportChakraOptions& options);

/// `hopsim export-chakra EXPERIMENT --out DIR`: its options, and export_chakra_command.
Command declare_export_chakra_command(CLI::App& program);

}  // namespace hopsim::tools
