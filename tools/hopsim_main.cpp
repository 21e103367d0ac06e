// hopsim: the command-line program (run, later explain, sweep, regress).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/config/experiment.hpp"
#include "tools/report.hpp"
#include "topology/cluster.hpp"
#include "workloads/runner.hpp"
#include "workloads/summary.hpp"

namespace {

struct RunOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  bool json = false;
  std::string out_dir;
  bool no_wall_time = false;
};

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  if (!out || !(out << text)) {
    throw hopsim::config::ConfigError(fmt::format("{}: cannot write file", path.string()));
  }
}

// Returns the exit code: 0 ok, 1 the run failed (stuck tasks).
int run(const RunOptions& o) {
  using namespace hopsim;
  const config::Experiment exp = config::load_experiment(o.experiment, o.overrides);
  const topo::Cluster cluster(exp.cluster.topology);
  const work::Plan plan = work::build_flows_plan(exp.flows);
  const work::Outcome outcome = work::simulate(cluster, plan);
  if (!outcome.stuck.empty()) {
    fmt::print(stderr, "{}: {} tasks never ran (a dependency cycle)\n", o.experiment,
               outcome.stuck.size());
    return 1;
  }
  const work::Summary summary = work::summarize(cluster, plan, outcome);
  const auto report =
      tools::make_report({exp, cluster, plan, outcome, summary, !o.no_wall_time});
  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir);
    write_file(std::filesystem::path(o.out_dir) / "report.json", report.dump(2) + "\n");
    write_file(std::filesystem::path(o.out_dir) / "config.json", exp.resolved.dump(2) + "\n");
  }
  if (o.json) {
    fmt::print("{}\n", report.dump(2));
  } else {
    fmt::print("{}", tools::format_summary(report));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hopsim: a discrete-event simulator of GPU training clusters"};
  app.require_subcommand(1);
  RunOptions o;
  CLI::App* run_cmd = app.add_subcommand("run", "simulate an experiment and report");
  run_cmd->add_option("experiment", o.experiment, "experiment JSON file")->required();
  run_cmd->add_option("--set", o.overrides, "override a config key: KEY=VALUE (dotted path)");
  run_cmd->add_flag("--json", o.json, "print the report as JSON instead of a summary");
  run_cmd->add_option("--out", o.out_dir, "write report.json and config.json into DIR");
  run_cmd->add_flag("--no-wall-time", o.no_wall_time,
                    "leave sim.wall_s out of the report, so that reruns are byte-identical");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return run(o);
  } catch (const hopsim::config::ConfigError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
}
