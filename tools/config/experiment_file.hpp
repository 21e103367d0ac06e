// Reads an experiment (configs/experiments/*.json): cluster, model, calibration, parallel mesh,
// workload, overrides; checks it; keeps the resolved document.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"
#include "workloads/experiment/experiment.hpp"

namespace hopsim::config {

/// One --set as applied: its argument, its dotted key, and the value before and after in the
/// document it went into (JSON text; unset where there was none, or none is left).
struct OverrideChange {
  std::string text;
  std::string key;
  std::optional<std::string> before;
  std::optional<std::string> after;
};

/// An experiment as read from its files.
struct ExperimentFile {
  work::Experiment experiment;
  std::string file;
  std::string cluster_file;      ///< the file the cluster came from (the experiment's if inline)
  std::string model_file;        ///< empty when the experiment names no model
  std::string calibration_file;  ///< empty when the experiment names no table
  /// The experiment after overrides, with the cluster and model inlined: written beside reports.
  nlohmann::ordered_json resolved;
  /// Where each part came from, for errors found after parsing.
  std::shared_ptr<const Origin> origin;
  std::shared_ptr<const Origin> cluster_origin;
  std::shared_ptr<const Origin> model_origin;
  /// What is accepted but worth a look ("file: /pointer: message"): the calibration table's
  /// oddities (explain prints these) and the cluster's figures beyond shipping hardware
  /// (`hardware_warnings`, which run prints too).
  std::vector<std::string> warnings;
  std::vector<std::string> hardware_warnings;
  /// Every file read to load it (the experiment, its cluster, model, calibration tables and
  /// their bases, routing counts, a Chakra trace's files), as named when read: the inputs no
  /// output of its run may replace (tools/commands/output_file.hpp).
  std::vector<std::string> inputs;
  /// The --set arguments in the order applied, with what each changed.
  std::vector<OverrideChange> changes;

  /// Throws the ConfigError of `problem` (a pointer into the experiment), naming the file or
  /// the --set argument that holds the value.
  [[noreturn]] void fail(const Problem& problem) const;
};

/// How an override that `--unset KEY` gave starts: unset_override(KEY) removes KEY as "KEY=null"
/// does, and messages name it "--unset KEY", as the user typed it.
inline constexpr std::string_view kUnsetPrefix = "--unset ";

/// The override of `--unset KEY`, for load_experiment's `overrides`.
inline std::string unset_override(const std::string& key) {
  return std::string(kUnsetPrefix) + key;
}

/// Loads `path`, applies `overrides` ("a.b.c=VALUE", VALUE as JSON or else as a string, or
/// unset_override(KEY);
/// keys under "cluster." and "model." go into those files' documents), parses, and checks
/// (work::check). Throws ConfigError naming the file (or --set argument) and JSON pointer of
/// the first bad value.
ExperimentFile load_experiment(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace hopsim::config
