// `hopsim explain`: the closed-form numbers of an experiment, without simulating it.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tools/commands/command.hpp"
#include "tools/commands/run_command.hpp"
#include "tools/config/experiment_file.hpp"

namespace hopsim::tools {

/// The explanation as JSON (params, memory, FLOPs, and CP or EP numbers by workload kind).
nlohmann::ordered_json explain(const config::ExperimentFile& file);

/// The explanation for a terminal: nested keys indented, numbers in readable units chosen by
/// their key's unit suffix (bytes, seconds, FLOPs, tokens, shares).
std::string format_explanation(const nlohmann::ordered_json& explanation);

/// Prints the explanation (readable text, or JSON with options.json). Returns the exit code.
int explain_command(const RunOptions& options);

/// `hopsim explain EXPERIMENT`: its options, and explain_command.
Command declare_explain_command(CLI::App& program);

}  // namespace hopsim::tools
