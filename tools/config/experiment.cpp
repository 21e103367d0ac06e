// Experiment files: the cluster (a path or inline), the workload, overrides, the resolved copy.
#include "tools/config/experiment.hpp"

#include <filesystem>
#include <fstream>
#include <unordered_map>

#include <fmt/format.h>

#include "tools/config/flows_config.hpp"
#include "tools/config/overrides.hpp"

namespace hopsim::config {
namespace {

std::string relative_to(const std::string& base_file, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) {
    return path;
  }
  return (std::filesystem::path(base_file).parent_path() / p).lexically_normal().string();
}

void check_workload_kind(const Node& workload, const std::string& kind) {
  if (kind != "flows") {
    workload.at("kind").fail(fmt::format(
        "workload kind \"{}\" is not simulated yet; this version simulates \"flows\"", kind));
  }
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw ConfigError(fmt::format("{}: cannot open file", path));
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw ConfigError(fmt::format("{}: invalid JSON at byte {}: {}", path, e.byte,
                                  std::string(e.what()).substr(std::string(e.what()).find(':') + 2)));
  }
}

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  Experiment exp;
  exp.file = path;
  nlohmann::json doc = read_json_file(path);
  Node root(doc, path);
  root.expect_object();
  nlohmann::json cluster_doc;
  exp.cluster_file = path;
  bool cluster_in_file = false;
  if (root.has("cluster") && doc["cluster"].is_string()) {
    exp.cluster_file = relative_to(path, doc["cluster"].get<std::string>());
    cluster_doc = read_json_file(exp.cluster_file);
    cluster_in_file = true;
  }
  for (const std::string& o : overrides) {
    const std::size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw ConfigError(fmt::format("--set: expected KEY=VALUE, got \"{}\"", o));
    }
    const std::string key = o.substr(0, eq);
    if (cluster_in_file && key.rfind("cluster.", 0) == 0) {
      apply_override(cluster_doc, key.substr(8), o.substr(eq + 1));
    } else {
      apply_override(doc, key, o.substr(eq + 1));
    }
  }
  root.allow_only({"name", "description", "cluster", "model", "calibration", "parallel",
                   "workload", "seed"});
  exp.name = root.has("name") ? root.at("name").string()
                              : std::filesystem::path(path).stem().string();
  exp.seed = root.has("seed") ? static_cast<std::uint64_t>(root.at("seed").integer_in(0, INT64_MAX))
                              : 1;
  const Node cluster_node = cluster_in_file ? Node(cluster_doc, exp.cluster_file) : root.at("cluster");
  exp.cluster = parse_cluster(cluster_node);
  const Node workload = root.at("workload");
  workload.expect_object();
  exp.kind = workload.at("kind").string();
  check_workload_kind(workload, exp.kind);
  exp.flows = parse_flows(workload, exp.cluster.topology.nodes * exp.cluster.topology.gpus_per_node);
  exp.resolved = nlohmann::ordered_json::parse(doc.dump());
  if (cluster_in_file) {
    exp.resolved["cluster"] = nlohmann::ordered_json::parse(cluster_doc.dump());
  }
  return exp;
}

}  // namespace hopsim::config
