// Experiment files: the cluster (a path or inline), the workload, overrides, the resolved copy.
#include "tools/config/experiment.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "tools/config/calibration_config.hpp"
#include "tools/config/collective_config.hpp"
#include "tools/config/flows_config.hpp"
#include "tools/config/layer_config.hpp"
#include "tools/config/model_config.hpp"
#include "tools/config/overrides.hpp"

namespace hopsim::config {
namespace {

constexpr std::string_view kClusterPrefix = "cluster.";
constexpr std::string_view kModelPrefix = "model.";

std::string relative_to(const std::string& base_file, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute()) {
    return path;
  }
  return (std::filesystem::path(base_file).parent_path() / p).lexically_normal().string();
}

Experiment::Validation parse_validation(const Node& n, const work::CollectiveJob& job) {
  n.allow_only({"metric", "bytes", "published", "source"});
  Experiment::Validation v;
  v.metric = n.at("metric").one_of({"busbw_GBps", "time_s"});
  v.bytes = Bytes{n.at("bytes").integer_in(1, INT64_MAX)};
  if (std::find(job.sizes.begin(), job.sizes.end(), v.bytes) == job.sizes.end()) {
    n.at("bytes").fail(fmt::format("{} is not one of the workload's sizes", v.bytes.n));
  }
  v.published = n.at("published").positive();
  v.source = n.at("source").string();
  return v;
}

// "KEY=VALUE" split at the first '='; KEY must not be empty.
std::pair<std::string, std::string> split_override(const std::string& o) {
  const std::size_t eq = o.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(fmt::format("--set: expected KEY=VALUE, got \"{}\"", o));
  }
  return {o.substr(0, eq), o.substr(eq + 1)};
}

// The longest any flow can take to end, from the cluster's slowest link and longest route:
// while any flow moves bytes, some link is saturated (max-min), so all flows together move at
// least the slowest link's capacity. Rejects workloads whose times would not fit in Time.
void check_time_range(const Node& flows, const std::vector<work::ExplicitFlow>& list,
                      const topo::Spec& spec) {
  const double slowest_bytes_per_s =
      std::min(spec.nvlink.bandwidth.bytes_per_s,
               spec.nic.bandwidth.bytes_per_s / (spec.oversubscription * spec.spines));
  const Time longest_route =
      spec.software_overhead + 2 * (spec.nvlink.latency + spec.nic.latency + spec.spine_latency);
  double bytes = 0;
  Time last_start;
  for (const work::ExplicitFlow& f : list) {
    bytes += static_cast<double>(f.bytes.n);
    last_start = std::max(last_start, f.start);
  }
  const double n = static_cast<double>(list.size());
  const double bound_s = last_start.seconds() + n * (longest_route.seconds() + 3e-12) +
                         bytes / slowest_bytes_per_s;
  const double limit_s = Time::max().seconds() / 2;
  if (!(bound_s <= limit_s)) {
    flows.fail(fmt::format(
        "these flows may need up to {:.3g} s of simulated time ({:.3g} bytes at the slowest "
        "link's {:.3g} B/s, plus start times and latencies); at most {:.3g} s can be simulated",
        bound_s, bytes, slowest_bytes_per_s, limit_s));
  }
}

// Line and column (from 1) of the byte at `offset` (from 1, as nlohmann reports it).
std::pair<std::size_t, std::size_t> line_column(const std::string& text, std::size_t offset) {
  const std::size_t end = std::min(offset > 0 ? offset - 1 : 0, text.size());
  std::size_t line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, end - line_start + 1};
}

// Why `path` cannot be read as a file, if it cannot ("no such file", "is a directory, ...").
std::string file_problem(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return "no such file";
  }
  if (std::filesystem::is_directory(path, ec)) {
    return "is a directory, expected a JSON file";
  }
  return "";
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  if (const std::string problem = file_problem(path); !problem.empty()) {
    throw ConfigError(fmt::format("{}: {}", path, problem));
  }
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in && !in.eof()) {
    throw ConfigError(fmt::format("{}: cannot read file", path));
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at ...: <what went wrong>".
    const std::string what = e.what();
    const std::size_t colon = what.find(": ");
    const auto [line, column] = line_column(text, e.byte);
    throw ConfigError(fmt::format("{}: invalid JSON at line {}, column {}: {}", path, line, column,
                                  colon == std::string::npos ? what : what.substr(colon + 2)));
  }
}

namespace {

// A part of the experiment that may live in a file of its own ("cluster", "model"): its
// document, the file errors name, and whether --set keys under "<key>." go into that file.
// clang-tidy 14 flags the implicit default constructor (its members' may allocate); an
// allocation failure would end the program anyway.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Linked {
  nlohmann::json doc;
  std::string file;
  bool in_file = false;
};

// Reads the file that the string at `at` names (relative to the experiment); a file that
// cannot be read is an error at `at`, naming the file: "/cluster: cluster file "x": no such file".
nlohmann::json read_referenced(const Node& at, const std::string& file) {
  if (const std::string problem = file_problem(file); !problem.empty()) {
    at.fail(fmt::format("{} file \"{}\": {}", at.path().back(), file, problem));
  }
  return read_json_file(file);
}

Linked link(const nlohmann::json& experiment, const std::string& path, const std::string& key) {
  Linked l;
  l.file = path;
  if (experiment.contains(key) && experiment[key].is_string()) {
    l.file = relative_to(path, experiment[key].get<std::string>());
    l.doc = read_referenced(Node(experiment, path).at(key), l.file);
    l.in_file = true;
  }
  return l;
}

Node node_of(const Linked& l, const Node& root, std::string_view key) {
  return l.in_file ? Node(l.doc, l.file) : root.at(key);
}

// Applies --set overrides: the experiment's own keys first, so that `--set cluster=OTHER.json`
// picks the file; then keys under "cluster." and "model." into those files' documents (or
// into the experiment, where they are inline).
void apply_overrides(const std::string& path, const std::vector<std::string>& overrides,
                     nlohmann::json& doc, Linked& cluster, Linked& model) {
  std::vector<std::pair<std::string, std::string>> linked_overrides;
  for (const std::string& o : overrides) {
    auto [key, value] = split_override(o);
    if (key.starts_with(kClusterPrefix) || key.starts_with(kModelPrefix)) {
      linked_overrides.emplace_back(std::move(key), std::move(value));
    } else {
      apply_override(doc, key, value);
    }
  }
  cluster = link(doc, path, "cluster");
  model = link(doc, path, "model");
  for (const auto& [key, value] : linked_overrides) {
    Linked& target = key.starts_with(kClusterPrefix) ? cluster : model;
    if (target.in_file) {
      apply_override(target.doc, key.substr(key.find('.') + 1), value);
    } else {
      apply_override(doc, key, value);
    }
  }
}

void parse_workload(const Node& root, const Node& workload, Experiment& exp) {
  const int gpus = exp.cluster.topology.nodes * exp.cluster.topology.gpus_per_node;
  if (exp.kind == "flows") {
    exp.flows = parse_flows(workload, gpus);
    check_time_range(workload.at("flows"), exp.flows, exp.cluster.topology);
  } else if (exp.kind == "collective") {
    exp.collective =
        parse_collective(workload, gpus, exp.cluster.topology.gpus_per_node, exp.cluster.nccl);
  } else if (!exp.model) {
    root.fail(fmt::format("missing key \"model\" (workload kind \"{}\" needs one)", exp.kind));
  } else if (exp.kind == "attention_layer") {
    exp.attention = parse_attention_layer(workload, exp.parallel);
  } else {
    exp.moe = parse_moe_layer(workload, *exp.model, exp.parallel);
  }
  if (root.has("validation")) {
    if (exp.kind != "collective") {
      root.at("validation").fail("validation applies to workload kind \"collective\" only");
    }
    exp.validation = parse_validation(root.at("validation"), exp.collective);
  }
}

}  // namespace

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  Experiment exp;
  exp.file = path;
  nlohmann::json doc = read_json_file(path);
  Node root(doc, path);
  root.expect_object();
  Linked cluster;
  Linked model;
  apply_overrides(path, overrides, doc, cluster, model);
  root.allow_only({"name", "description", "cluster", "model", "calibration", "parallel",
                   "workload", "seed", "validation"});
  exp.name = root.has("name") ? root.at("name").string()
                              : std::filesystem::path(path).stem().string();
  exp.seed = root.has("seed") ? static_cast<std::uint64_t>(root.at("seed").integer_in(0, INT64_MAX))
                              : 1;
  exp.cluster_file = cluster.file;
  exp.cluster = parse_cluster(node_of(cluster, root, "cluster"));
  if (root.has("model")) {
    exp.model = parse_model(node_of(model, root, "model"));
  }
  if (root.has("calibration")) {
    exp.calibration_file = relative_to(path, root.at("calibration").string());
    const nlohmann::json table = read_referenced(root.at("calibration"), exp.calibration_file);
    exp.calibration = parse_calibration(Node(table, exp.calibration_file));
    check_calibration_for(*exp.calibration, exp.cluster.gpu.name, exp.calibration_file);
  }
  const int gpus = exp.cluster.topology.nodes * exp.cluster.topology.gpus_per_node;
  if (root.has("parallel")) {
    exp.parallel = parse_parallel(root.at("parallel"), exp.model ? &*exp.model : nullptr, gpus);
  }
  const Node workload = root.at("workload");
  workload.expect_object();
  exp.kind = workload.at("kind").one_of(
      {"flows", "collective", "attention_layer", "moe_layer"});
  parse_workload(root, workload, exp);
  exp.resolved = nlohmann::ordered_json::parse(doc.dump());
  if (cluster.in_file) {
    exp.resolved["cluster"] = nlohmann::ordered_json::parse(cluster.doc.dump());
  }
  if (model.in_file) {
    exp.resolved["model"] = nlohmann::ordered_json::parse(model.doc.dump());
  }
  return exp;
}

}  // namespace hopsim::config
