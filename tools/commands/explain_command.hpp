// `hopsim explain`: the closed-form numbers of an experiment, without simulating it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tools/config/experiment.hpp"
#include "tools/commands/run_command.hpp"

namespace hopsim::tools {

/// The explanation as JSON (params, memory, FLOPs, and CP or EP numbers by workload kind).
nlohmann::ordered_json explain(const config::Experiment& exp);

/// Prints the explanation (a summary, or JSON with options.json). Returns the exit code.
int explain_command(const RunOptions& options);

}  // namespace hopsim::tools
