// Reads an experiment (configs/experiments/*.json): cluster, workload, overrides.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/config/cluster_config.hpp"
#include "workloads/compute/calibration.hpp"
#include "workloads/jobs/collective_job.hpp"
#include "workloads/jobs/flows.hpp"
#include "workloads/jobs/layer_jobs.hpp"
#include "workloads/model/model.hpp"

namespace hopsim::config {

struct Experiment {
  std::string file;
  std::string name;
  std::string cluster_file;  ///< the file the cluster came from (the experiment if inline)
  ClusterConfig cluster;
  std::string kind;  ///< workload kind
  std::vector<work::ExplicitFlow> flows;  ///< kind "flows"
  work::CollectiveJob collective;         ///< kind "collective"
  work::AttentionLayerJob attention;      ///< kind "attention_layer"
  work::MoeLayerJob moe;                  ///< kind "moe_layer"
  std::optional<work::ModelSpec> model;
  work::ParallelSpec parallel;
  std::string calibration_file;  ///< resolved path; empty when the experiment names none
  std::optional<work::Calibration> calibration;  ///< checked against the cluster's GPU
  /// A published figure to compare the run with (configs/validation/).
  struct Validation {
    std::string metric;  ///< "busbw_GBps" or "time_s"
    Bytes bytes;         ///< the row it applies to
    double published = 0;
    std::string source;
  };
  std::optional<Validation> validation;
  std::uint64_t seed = 1;
  /// The experiment after overrides, with the cluster inlined: written beside reports.
  nlohmann::ordered_json resolved;
};

/// Loads `path`, applies `overrides` ("a.b.c=VALUE", VALUE as JSON or else as a string;
/// keys under "cluster." go into the cluster file's document), checks everything.
/// Throws ConfigError naming the file and JSON pointer of the first bad value.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides);

/// Reads a JSON file; a missing file or a syntax error is a ConfigError naming the file.
nlohmann::json read_json_file(const std::string& path);

}  // namespace hopsim::config
