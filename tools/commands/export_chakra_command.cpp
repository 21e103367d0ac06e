// Writing a simulated case as Chakra ET files and the experiment that replays them.
#include "tools/commands/export_chakra_command.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/chakra/et_file.hpp"
#include "tools/commands/case_run.hpp"
#include "tools/commands/command.hpp"
#include "tools/commands/output_file.hpp"
#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"
#include "workloads/trace/plan_export.hpp"

namespace hopsim::tools {
namespace {

namespace fs = std::filesystem;
using topo::on_links;

// The experiment's perturbations that change links (by their place in its list): the network's,
// which an execution trace has no place for. The others change how fast GPUs compute, which
// the exported kernels' durations carry.
std::vector<std::size_t> link_entries(const work::Experiment& e) {
  std::vector<std::size_t> entries;
  for (const topo::Perturbation& p : e.cluster.perturbations) {
    if (on_links(p) && (entries.empty() || entries.back() != p.entry)) {
      entries.push_back(p.entry);
    }
  }
  return entries;
}

// The experiment that replays the files: the same cluster (inline, as resolved), the GPUs, and
// the perturbations of its links (those of its GPUs' speeds are in the kernels' durations: the
// replay must not slow them twice).
nlohmann::ordered_json replay_experiment(const config::ExperimentFile& file,
                                         const std::string& name,
                                         const work::ExportedPlan& exported) {
  nlohmann::ordered_json e;
  e["name"] = name + "-replay";
  e["description"] = fmt::format(
      "{} as hopsim simulated it, written by hopsim export-chakra as Chakra execution traces "
      "(one file per GPU) and replayed as the chakra kind.",
      file.file);
  e["cluster"] = file.resolved.at("cluster");
  e["workload"] = {{"kind", "chakra"}, {"trace", name}, {"gpus", exported.gpus}};
  const std::vector<std::size_t> links = link_entries(file.experiment);
  if (!links.empty()) {
    e["description"] = e["description"].get<std::string>() +
                       " The perturbations of its links are the experiment's; those of its GPUs' "
                       "speeds are in the kernels' durations.";
    nlohmann::ordered_json kept = nlohmann::ordered_json::array();
    for (const std::size_t entry : links) {
      kept.push_back(file.resolved.at("perturbations").at(entry));
    }
    e["perturbations"] = std::move(kept);
  }
  return e;
}

// One line each for what the traces carry of the perturbations and what they cannot: the
// slow GPUs' kernels as durations; the links' changes, which belong to the cluster a replay
// runs on, only in the replay experiment written beside them.
void print_perturbations(const config::ExperimentFile& file, bool folded,
                         const std::string& replay) {
  const work::Experiment& e = file.experiment;
  if (std::ranges::any_of(e.cluster.perturbations, [](const auto& p) { return !on_links(p); })) {
    fmt::print("perturbed GPUs: their kernels are exported at the durations the run {} them "
               "(their speeds are in the traces; a replay must not perturb them again)\n",
               folded ? "measured" : "simulated");
  }
  for (const std::size_t entry : link_entries(e)) {
    fmt::print(stderr,
               "warning: {}: /perturbations/{} {}: not in the .et files (a Chakra trace holds "
               "no links; a replay runs on the links of its cluster): {} keeps it, so "
               "`hopsim run` of it reproduces the run; a replay elsewhere (ASTRA-sim, another "
               "cluster) must apply the same perturbation\n",
               file.origin->describe(nlohmann::json::json_pointer(
                   fmt::format("/perturbations/{}", entry))),
               entry, config::echo(file.resolved.at("perturbations").at(entry).dump(), 80),
               replay);
  }
}

}  // namespace

int export_chakra_command(const ExportChakraOptions& o) {
  const CaseRun run = run_for_case(o.experiment, o.overrides, o.case_name);
  const config::ExperimentFile& file = run.file;
  const work::CaseResult& c = run.picked();
  if (c.plan_scale != 1) {
    throw config::ConfigError(fmt::format(
        "{}: this case simulated {:g} times fewer layers than it reports (identical MoE layers "
        "repeated); export them all with --set workload.repeat_layers=false",
        o.experiment, c.plan_scale));
  }
  // An unfolded case's kernels at their GPUs' speeds, as run() simulated them; a folded step's
  // plan carries them already.
  const work::ComputeSpeeds speeds(file.experiment.cluster, file.experiment.gpu_types);
  const bool at_speeds = work::cases_at_speeds(file.experiment);
  const work::ExportedPlan exported = work::export_plan(c.plan, at_speeds ? &speeds : nullptr);
  const std::string name =
      file.experiment.name.empty() ? fs::path(o.experiment).stem().string()
                                   : file.experiment.name;
  std::vector<std::pair<std::string, std::string>> files;
  std::size_t nodes = 0;
  for (std::size_t r = 0; r < exported.trace.ranks.size(); ++r) {
    files.emplace_back((fs::path(o.out) / fmt::format("{}.{}.et", name, r)).string(),
                       chakra::encode_rank(exported.trace.ranks[r]));
    nodes += exported.trace.ranks[r].nodes.size();
  }
  const std::string replay = (fs::path(o.out) / (name + ".json")).string();
  files.emplace_back(replay, replay_experiment(file, name, exported).dump(2) + "\n");
  for (const auto& [path, text] : files) {
    refuse_input("--out " + o.out, path, file.inputs, "this export");
  }
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) {
    throw OutputError(fmt::format("{}: cannot make the folder: {}", o.out, ec.message()));
  }
  write_files_atomically(files);
  fmt::print("wrote {} Chakra ET files ({} nodes, schema {}) of {}{} to {}\n",
             exported.trace.ranks.size(), nodes, chakra::kSchemaVersion, o.experiment,
             c.name.empty() ? "" : fmt::format(" (case \"{}\")", c.name), o.out);
  fmt::print("simulated step time {:.6f} ms; replay it: hopsim run {}\n",
             c.summary.step.seconds() * 1e3, replay);
  print_perturbations(file, !at_speeds, replay);
  if (!run.result.probes.empty()) {
    fmt::print("note: a folded step: the files hold its folded plan (one GPU per pipeline "
               "stage, measured layers as kernels)\n");
  }
  return 0;
}

Command declare_export_chakra_command(CLI::App& program) {
  auto s = std::make_shared<WithUnsets<ExportChakraOptions>>();
  ExportChakraOptions& ex = s->options;
  CLI::App* app = program.add_subcommand(
      "export-chakra", "write what hopsim simulated as Chakra execution traces, one per GPU");
  app->add_option("experiment", ex.experiment, "experiment JSON file")->required();
  app->add_option("--out", ex.out, "folder for the .et files and the replay experiment")
      ->required();
  app->add_option("--set", ex.overrides, "override an experiment key: KEY=VALUE");
  app->add_option("--unset", s->unset, "remove an optional key: --set KEY=null");
  app->add_option("--case", ex.case_name,
                  "the case to export (a collective's size); default: the only one");
  return {app, [s](const std::string& /*command_line*/) {
            return export_chakra_command(s->resolved());
          }};
}

}  // namespace hopsim::tools
