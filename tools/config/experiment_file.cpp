// Experiment files: the cluster (a path or inline), the workload, overrides, the resolved copy.
#include "tools/config/experiment_file.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "tools/config/calibration_choice.hpp"
#include "tools/config/calibration_config.hpp"
#include "tools/config/cluster_config.hpp"
#include "tools/config/ep_library_config.hpp"
#include "tools/config/collective_config.hpp"
#include "tools/config/flows_config.hpp"
#include "tools/config/job_config.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/keys/attention_keys.hpp"
#include "tools/config/keys/experiment_keys.hpp"
#include "tools/config/keys/perturbation_keys.hpp"
#include "tools/config/layer_config.hpp"
#include "tools/config/model_config.hpp"
#include "tools/config/overrides.hpp"
#include "tools/config/perturbation_config.hpp"
#include "tools/config/plausibility.hpp"
#include "tools/config/presets.hpp"
#include "tools/config/referenced_file.hpp"
#include "workloads/experiment/gpu_types.hpp"
#include "workloads/experiment/stragglers.hpp"

namespace hopsim::config {
namespace {

constexpr std::string_view kClusterPrefix = "cluster.";
constexpr std::string_view kModelPrefix = "model.";

namespace ek = keys::experiment;

work::Validation parse_validation(const Node& n) {
  namespace vk = keys::validation;
  n.allow_only(vk::kSection);
  work::Validation v;
  v.metric = vk::kMetric.choices[n.read(vk::kMetric)];
  if (const auto bytes = n.read_if(vk::kBytes)) {
    v.bytes = Bytes{*bytes};
  }
  v.published = n.read(vk::kPublished);
  v.source = n.read(vk::kSource);
  return v;
}

// "--set KEY=VALUE", shortened: values can be long (a list of ranks, a whole object).
std::string set_text(const std::string& o) { return "--set " + echo(o, 60); }

// One override: its dotted key, its value (JSON text, or a plain string), and the argument as
// the user typed it, for messages.
struct Override {
  std::string key;
  std::string value;
  std::string text;
};

// "KEY=VALUE" split at the first '=' (KEY must not be empty), or unset_override(KEY): KEY=null,
// named "--unset KEY".
Override split_override(const std::string& o) {
  if (o.starts_with(kUnsetPrefix)) {
    const std::string key = o.substr(kUnsetPrefix.size());
    if (key.empty()) {
      throw ConfigError("--unset: expected a KEY");
    }
    return {key, "null", "--unset " + echo(key, 60)};
  }
  const std::size_t eq = o.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(fmt::format("--set: expected KEY=VALUE, got \"{:.60}\"", o));
  }
  return {o.substr(0, eq), o.substr(eq + 1), set_text(o)};
}

// A part of the experiment that may live in a file of its own ("cluster", "model"): its
// document, where errors in it point, and whether --set keys under "<key>." go into that file.
// clang-tidy 14 flags the implicit default constructor (its members' may allocate); an
// allocation failure would end the program anyway.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Linked {
  nlohmann::json doc;
  std::shared_ptr<Origin> origin;
  bool in_file = false;
};

// A calibration key's table for `gpu`: none ("none"), the one it names, which must be made for
// the GPU, or with "auto" the one choose_calibration picks (a scaled table is checked against
// its own GPU's figures). Plausibility warnings go to `warnings`.
struct ReadTable {
  std::shared_ptr<work::Calibration> table;  // null: the roofline alone
  std::optional<work::TableScaling> scaling;
  std::string file;
  std::string note;  // how "auto" chose, and the base table attached
};

// "auto" chose `t` for `gpu_spec`: its checks, each error prefixed with what chose the table
// and why.
std::vector<std::string> check_auto_choice(const ReadTable& t, const topo::GpuSpec& gpu_spec,
                                           const std::string& why, const Node* gpu_node) {
  try {
    if (t.scaling) {  // checked against its own GPU's figures
      return check_calibration_plausible(*t.table, datasheet_figures_of(*t.table), t.file);
    }
    return check_calibration_on(*t.table, gpu_spec, t.file, gpu_node);
  } catch (const ConfigError& e) {
    if (std::string_view(e.what()).starts_with("--set ")) {
      throw;  // the --set is what to fix, not the choice
    }
    throw ConfigError(
        fmt::format("calibration \"auto\" chose {} for the cluster's {} ({}); {}; "
                    "name another table or \"none\" (the roofline)",
                    t.file, gpu_spec.name, why, e.what()));
  }
}

ReadTable read_table(const Node& at, const topo::GpuSpec& gpu_spec,
                     std::vector<std::string>& warnings, const Node* gpu_node = nullptr) {
  ReadTable out;
  const std::string named = at.string();
  if (named == "none") {
    return out;
  }
  std::vector<std::string> found;
  if (named == "auto") {
    CalibrationChoice choice = choose_calibration(gpu_spec);
    out.note = choice.note;
    if (!choice.table) {
      return out;
    }
    out.file = choice.file;
    out.table = std::move(choice.table);
    out.scaling = choice.scaling;
    found = check_auto_choice(out, gpu_spec, choice.why, gpu_node);
  } else {
    out.file = referenced_file(at, "calibration");
    const nlohmann::json table = read_referenced(at, out.file, "calibration");
    out.table = std::make_shared<work::Calibration>(parse_calibration(Node(table, out.file)));
    try {  // a table for another GPU: the experiment's key is what to change
      check_calibration_for(*out.table, gpu_spec.name, out.file);
    } catch (const ConfigError& e) {
      fail_at(*at.origin(), Node::Pointer(at.path().to_string()), e.what());
    }
    found = check_calibration_on(*out.table, gpu_spec, out.file, gpu_node);
  }
  for (std::string& w : found) {
    warnings.push_back(std::move(w));
  }
  const std::string base = attach_base(*out.table, out.file, gpu_spec.name);
  if (!base.empty()) {
    out.note += (out.note.empty() ? out.file + ": " : "; ") + base;
  }
  return out;
}

// The experiment's calibration table (read_table), for the cluster's GPU; `cluster` is the
// cluster's document, whose gpu figures a --set may have written.
void read_calibration(const Node& root, const Node& cluster, ExperimentFile& f) {
  work::Experiment& e = f.experiment;
  const std::optional<Node> gpu = cluster.is_object() && cluster.has("gpu")
                                      ? std::optional<Node>(cluster.at("gpu"))
                                      : std::nullopt;
  ReadTable t =
      read_table(root.at(ek::kCalibration), e.cluster.gpu, f.warnings, gpu ? &*gpu : nullptr);
  e.calibration_note = std::move(t.note);
  if (!t.table) {
    return;
  }
  f.calibration_file = t.file;
  e.calibration_scaling = t.scaling;
  e.calibration = std::move(t.table);
  e.calibration_name = f.calibration_file;
}

// Each GpuType perturbation's calibration: its "calibration" key, else the experiment's way
// ("auto" unless the experiment has none); its kernels then priced against the cluster GPU's.
void price_gpu_types(const Node& root, ExperimentFile& f) {
  work::Experiment& e = f.experiment;
  const bool calibrated = root.has(ek::kCalibration) && root.read(ek::kCalibration) != "none";
  std::vector<work::TypeCalibration> tables;
  for (const topo::Perturbation& p : e.cluster.perturbations) {
    if (p.part != topo::PerturbedPart::GpuType) {
      continue;
    }
    const Node n = root.at(ek::kPerturbations).at(p.entry);
    const nlohmann::json fallback = calibrated ? "auto" : "none";
    namespace pk = keys::perturbation;
    const Node at = n.has(pk::kCalibration) ? n.at(pk::kCalibration) : Node(fallback, n.origin());
    ReadTable t = read_table(at, *p.gpu, f.warnings);
    tables.push_back({std::move(t.table), t.scaling, t.file.empty() ? "none" : t.file});
  }
  if (!tables.empty()) {
    work::price_gpu_types(e, tables);
  }
}

Linked link(const Node& root, const std::string& key) {
  Linked l;
  l.origin = std::const_pointer_cast<Origin>(root.origin());
  if (root.has(key) && root.at(key).is_string()) {
    const std::string file = referenced_file(root.at(key), key);
    l.doc = read_referenced(root.at(key), file, key);
    l.origin = std::make_shared<Origin>(Origin{file, {}});
    l.in_file = true;
  }
  return l;
}

Node node_of(const Linked& l, const Node& root, std::string_view key) {
  return l.in_file ? Node(l.doc, l.origin) : root.at(key);
}

// A file that a --set gives for the cluster, model or calibration table is relative to the
// working directory, as any path on a command line (a preset name stays a name); where no such
// file exists there, it stays relative to the experiment's file, as the file's own keys are
// (`--set cluster=../clusters/h200-hgx.json` from the repository root).
std::string path_from_here(const std::string& key, const std::string& value) {
  if (key != "cluster" && key != "model" && key != "calibration") {
    return value;
  }
  const nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
  const std::string path =
      parsed.is_string() ? parsed.get<std::string>() : (parsed.is_discarded() ? value : "");
  if (path.empty() || is_preset_name(path) || std::filesystem::path(path).is_absolute()) {
    return value;
  }
  std::error_code ec;
  const std::filesystem::path here = std::filesystem::absolute(path, ec);
  if (ec || !std::filesystem::exists(here, ec)) {
    return value;
  }
  return nlohmann::json(here.lexically_normal().string()).dump();
}

// Applies --set overrides: the experiment's own keys first, so that `--set cluster=OTHER.json`
// picks the file; then keys under "cluster." and "model." into those files' documents (or
// into the experiment, where they are inline). Each records where it wrote.
void apply_overrides(const std::vector<std::string>& overrides, nlohmann::json& doc,
                     const std::shared_ptr<Origin>& origin, Linked& cluster, Linked& model,
                     std::vector<OverrideChange>& changes) {
  const auto apply = [&](nlohmann::json& target, const std::string& key, const std::string& path,
                         const std::string& value, Origin& where, const std::string& text) {
    Applied a = apply_override(target, path, value);
    where.overrides.emplace_back(a.pointer, text);
    changes.push_back({text, key, std::move(a.before), std::move(a.after)});
  };
  std::vector<Override> linked_overrides;
  for (const std::string& o : overrides) {
    Override split = split_override(o);
    split.value = path_from_here(split.key, split.value);
    if (split.key.starts_with(kClusterPrefix) || split.key.starts_with(kModelPrefix)) {
      linked_overrides.push_back(std::move(split));
    } else {
      apply(doc, split.key, split.key, split.value, *origin, split.text);
    }
  }
  const Node root(doc, origin);
  cluster = link(root, "cluster");
  model = link(root, "model");
  for (const auto& [key, value, text] : linked_overrides) {
    Linked& target = key.starts_with(kClusterPrefix) ? cluster : model;
    const std::string_view section = key.starts_with(kClusterPrefix) ? "cluster" : "model";
    if (!doc.is_object() || !doc.contains(std::string(section))) {
      throw ConfigError(
          fmt::format("{}: the experiment names no {}; name one first (--set "
                      "{}=FILE.json, or inline)",
                      text, section, section));
    }
    if (target.in_file) {
      apply(target.doc, key, key.substr(key.find('.') + 1), value, *target.origin, text);
    } else {
      apply(doc, key, key, value, *origin, text);
    }
  }
}

}  // namespace

namespace {

// A problem with a flow read from a flows CSV ("/workload/flows/N/KEY"): the ConfigError
// "FILE:LINE: KEY: message"; other problems return.
void fail_in_flows_file(const work::Experiment& experiment, const Problem& problem) {
  const auto* job = std::get_if<work::FlowsJob>(&experiment.job);
  constexpr std::string_view kPrefix = "/workload/flows/";
  if (job == nullptr || job->source.empty() || !problem.path.starts_with(kPrefix)) {
    return;
  }
  // Flow N is the CSV's line N + 2 (the header is line 1; the file has no other lines).
  std::size_t index = 0;
  const std::string_view rest = std::string_view(problem.path).substr(kPrefix.size());
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
  if (ec != std::errc{}) {
    return;
  }
  const std::string_view key = std::string_view(end, rest.data() + rest.size());
  throw ConfigError(fmt::format("{}:{}: {}{}", job->source, index + 2,
                                key.empty() ? "" : fmt::format("{}: ", key.substr(1)),
                                problem.message));
}

}  // namespace

void ExperimentFile::fail(const Problem& problem) const {
  const auto in = [&](std::string_view prefix, const std::shared_ptr<const Origin>& part) {
    return part != origin &&
           (problem.path == prefix || problem.path.starts_with(std::string(prefix) + "/"));
  };
  for (const auto& [prefix, part] : {std::pair{std::string_view("/cluster"), cluster_origin},
                                     std::pair{std::string_view("/model"), model_origin}}) {
    if (in(prefix, part)) {
      fail_at(*part, Node::Pointer(problem.path.substr(prefix.size())), problem.message);
    }
  }
  fail_in_flows_file(experiment, problem);
  fail_at(*origin, Node::Pointer(problem.path), problem.message);
}

namespace {

// The workload's keys that set the experiment's compute model rather than the job (those of the
// kinds with FP8 GEMMs, and with attention, only), and the other optional parts: validation,
// perturbations, the solver.
void parse_parts(const Node& root, work::Experiment& e) {
  const Node workload = root.at(ek::kWorkload);
  if (workload.has(keys::attention::kFp8Recipe)) {
    const ChoiceKey& key = keys::attention::kFp8Recipe;
    e.fp8_recipe = *work::fp8_recipe_named(key.choices[workload.read(key)]);
  }
  if (workload.has(keys::attention::kAttentionKernel)) {
    const ChoiceKey& key = keys::attention::kAttentionKernel;
    e.attention_kernel = *work::attention_kernel_named(key.choices[workload.read(key)]);
  }
  if (root.has(ek::kValidation)) {
    e.validation = parse_validation(root.at(ek::kValidation));
  }
  if (root.has(ek::kPerturbations)) {
    e.cluster.perturbations = parse_perturbations(root.at(ek::kPerturbations), e.cluster);
    for (topo::Perturbation& p : e.cluster.perturbations) {
      if (p.kernel_draw) {
        p.kernel_draw->seed = e.seed;  // each kernel's speed draws with the experiment's seed
      }
    }
  }
  if (root.has(ek::kSolver)) {
    const Node solver = root.at(ek::kSolver);
    solver.expect_object();
    solver.allow_only(keys::solver::kSection);
    e.solver_tolerance = solver.read(keys::solver::kTolerance);
  }
}

// The experiment's models: its cluster (a file or inline), model, calibration, mesh, workload.
void parse_models(const Node& root, const Linked& cluster, const Linked& model, ExperimentFile& f) {
  work::Experiment& e = f.experiment;
  f.cluster_file = cluster.origin->file;
  const ClusterConfig parsed = parse_cluster(node_of(cluster, root, ek::kCluster.name));
  f.hardware_warnings = cluster_plausibility(node_of(cluster, root, ek::kCluster.name));
  f.warnings = f.hardware_warnings;
  e.cluster = parsed.topology;
  e.nccl = parsed.nccl;
  e.ep_libraries = parsed.ep_libraries;
  e.ep_libraries.files = read_ep_libraries(e.cluster.gpu.name);
  for (const work::LibraryFile& own : parsed.ep_libraries.files.files) {
    e.ep_libraries.files.files.push_back(own);  // the cluster's own: "deepep" when it has none
  }
  if (root.has(ek::kModel)) {
    e.model = parse_model(node_of(model, root, ek::kModel.name));
    f.model_file = model.origin->file;
  }
  if (root.has(ek::kCalibration)) {
    read_calibration(root, node_of(cluster, root, ek::kCluster.name), f);
  }
  if (root.has(ek::kParallel)) {
    e.parallel = parse_parallel(root.at(ek::kParallel));
  }
  const work::ModelSpec* model_spec = e.model ? &*e.model : nullptr;
  e.job = parse_workload(root.at(ek::kWorkload), JobParseContext{model_spec, e.seed});
}

// work::check, with the straggler draws made once the mesh checks out (its GPUs are the ones to
// draw from); the first problem is an error.
void check_experiment(ExperimentFile& f) {
  work::Experiment& e = f.experiment;
  Problems problems = work::check(e);
  const auto undrawn = [](const topo::Perturbation& p) { return p.drawn && p.gpus.empty(); };
  if (problems.empty() && std::ranges::any_of(e.cluster.perturbations, undrawn)) {
    work::draw_stragglers(e);
    problems = work::check(e);
  }
  if (!problems.empty()) {
    f.fail(problems.front());
  }
}

}  // namespace

ExperimentFile load_experiment(const std::string& argument,
                               const std::vector<std::string>& overrides) {
  const std::filesystem::path found = find_experiment(argument);
  const std::string path = found == argument ? argument : display_path(found);
  ExperimentFile f;
  const InputLog log(f.inputs);
  f.file = path;
  nlohmann::json doc = read_json_file(path);
  auto origin = std::make_shared<Origin>(Origin{path, {}});
  Linked cluster;
  Linked model;
  apply_overrides(overrides, doc, origin, cluster, model, f.changes);
  f.origin = origin;
  f.cluster_origin = cluster.origin;
  f.model_origin = model.origin;
  const Node root(doc, f.origin);
  root.expect_object();
  root.allow_only(ek::kSection);
  work::Experiment& e = f.experiment;
  e.name = root.read_if(ek::kName).value_or(std::filesystem::path(path).stem().string());
  e.seed = static_cast<std::uint64_t>(root.read(ek::kSeed));
  parse_models(root, cluster, model, f);
  parse_parts(root, e);
  check_experiment(f);
  price_gpu_types(root, f);
  f.resolved = nlohmann::ordered_json::parse(doc.dump());
  if (cluster.in_file) {
    f.resolved["cluster"] = nlohmann::ordered_json::parse(cluster.doc.dump());
  }
  if (model.in_file) {
    f.resolved["model"] = nlohmann::ordered_json::parse(model.doc.dump());
  }
  return f;
}

}  // namespace hopsim::config
