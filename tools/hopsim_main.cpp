// hopsim: the command-line program (run, explain, check-calibration; later sweep, regress).
#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/config/node.hpp"
#include "tools/commands/check_calibration_command.hpp"
#include "tools/commands/explain_command.hpp"
#include "tools/commands/run_command.hpp"

namespace {

int run_cli(int argc, char** argv) {
  CLI::App app{"hopsim: a discrete-event simulator of GPU training clusters"};
  app.require_subcommand(1);
  hopsim::tools::RunOptions o;
  CLI::App* run_cmd = app.add_subcommand("run", "simulate an experiment and report");
  run_cmd->add_option("experiment", o.experiment, "experiment JSON file")->required();
  run_cmd->add_option("--set", o.overrides, "override a config key: KEY=VALUE (dotted path)");
  run_cmd->add_flag("--json", o.json, "print the report as JSON instead of a summary");
  run_cmd->add_option("--out", o.out_dir, "write report.json and config.json into DIR");
  run_cmd->add_option("--trace", o.trace_file,
                      "write a Chrome trace (Perfetto) of the run to FILE");
  run_cmd->add_flag("--no-wall-time", o.no_wall_time,
                    "leave sim.wall_s out of the report, so that reruns are byte-identical");
  hopsim::tools::RunOptions x;
  CLI::App* explain_cmd =
      app.add_subcommand("explain", "print the closed-form numbers of an experiment");
  explain_cmd->add_option("experiment", x.experiment, "experiment JSON file")->required();
  explain_cmd->add_option("--set", x.overrides, "override a config key: KEY=VALUE (dotted path)");
  explain_cmd->add_flag("--json", x.json, "print JSON instead of a summary");
  std::string table;
  std::string gpu;
  CLI::App* check_cmd = app.add_subcommand(
      "check-calibration", "read a calibration table as the simulator does and summarize it");
  check_cmd->add_option("table", table, "calibration JSON file")->required();
  check_cmd->add_option("--gpu", gpu, "also check that the table fits this GPU, e.g. \"H100\"");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (check_cmd->parsed()) {
      return hopsim::tools::check_calibration_command(table, gpu);
    }
    if (explain_cmd->parsed()) {
      return hopsim::tools::explain_command(x);
    }
    return hopsim::tools::run_command(o);
  } catch (const hopsim::config::ConfigError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    // Bad input is a ConfigError, caught above; anything else is a bug: say so, and fail.
    fmt::print(stderr, "hopsim: internal error: {}\n", e.what());
    return 1;
  }
}
