// Summary of a calibration table: families, grid sizes, measured cells.
#include "tools/commands/check_calibration_command.hpp"

#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands/calibration_against.hpp"
#include "tools/commands/command.hpp"
#include "tools/config/calibration_config.hpp"
#include "tools/config/cluster_config.hpp"
#include "tools/config/experiment_file.hpp"
#include "tools/config/shipped_gpu.hpp"

namespace hopsim::tools {

namespace {

// Each table's family, how many of its cells have a time, "base" for a base's; then the total.
void print_tables(const work::Calibration& cal) {
  std::size_t measured = 0;
  std::size_t grid_cells = 0;
  for (const work::CalibrationTable& t : cal.tables) {
    std::size_t have = 0;
    for (const auto& c : t.time_us) {
      have += c.has_value() ? 1U : 0U;
    }
    fmt::print("  {:<13} {:<4} {:<18} {:<60} {:>6} of {:>6} cells{}\n", t.op, t.pass, t.impl,
               work::table_key(t) + " ", have, t.time_us.size(), t.tier >= 1 ? "  base" : "");
    measured += have;
    grid_cells += t.time_us.size();
  }
  fmt::print("{} of {} cells have a time\n", measured, grid_cells);
}

}  // namespace

namespace {

// The GPU the table is held against: --cluster's, else --gpu's as a shipped cluster has it
// (config::shipped_gpu); none without either.
std::optional<topo::GpuSpec> gpu_to_check(const std::string& gpu_name,
                                          const std::string& cluster_path) {
  if (!cluster_path.empty()) {
    return config::parse_cluster(config::Node(config::read_json_file(cluster_path), cluster_path))
        .topology.gpu;
  }
  if (gpu_name.empty()) {
    return std::nullopt;
  }
  const std::optional<config::ShippedGpu> shipped = config::shipped_gpu(gpu_name);
  if (!shipped) {
    throw config::ConfigError(fmt::format(
        "--gpu {}: no shipped cluster has this GPU to take its peaks from; give a cluster "
        "file with --cluster FILE",
        config::echo(gpu_name, 40)));
  }
  return shipped->gpu;
}

}  // namespace

int check_calibration_command(const std::string& path, const std::string& gpu_name,
                              const std::string& cluster_path, const std::string& against,
                              bool cells) {
  if (cells && against.empty()) {
    throw config::ConfigError(
        "check-calibration: --cells needs --against (the table to read the "
        "cells against)");
  }
  if (!against.empty() && cluster_path.empty()) {
    throw config::ConfigError(
        "check-calibration: --against needs --cluster (the GPU whose roofline answers where "
        "the other table has no cell)");
  }
  work::Calibration cal =
      config::parse_calibration(config::Node(config::read_json_file(path), path));
  if (!gpu_name.empty()) {
    config::check_calibration_for(cal, gpu_name, path);
  }
  // Against the GPU where one is named (the one check a run makes), else against the table's
  // own ceilings.
  const std::optional<topo::GpuSpec> gpu = gpu_to_check(gpu_name, cluster_path);
  const std::vector<std::string> warnings =
      gpu ? config::check_calibration_on(cal, *gpu, path)
          : config::check_calibration_plausible(cal, config::figures_of(cal), path);
  if (!against.empty()) {
    return print_against(cal, path, against, *gpu, cells);
  }
  for (const std::string& w : warnings) {
    fmt::print(stderr, "warning: {}\n", w);
  }
  const std::size_t own = cal.tables.size();
  const std::string base = config::attach_base(cal, path, gpu ? gpu->name : std::string());
  fmt::print("{}: {} table for \"{}\", {} tables\n", path, cal.source, cal.device, own);
  if (!base.empty()) {
    fmt::print("  {}; listed below with \"base\"\n", base);
  }
  print_tables(cal);
  return 0;
}

Command declare_check_calibration_command(CLI::App& program) {
  struct Options {
    std::string table;
    std::string gpu;
    std::string cluster;
    std::string against;
    bool cells = false;
  };

  auto o = std::make_shared<Options>();
  CLI::App* app = program.add_subcommand(
      "check-calibration", "read a calibration table as the simulator does and summarize it");
  app->add_option("table", o->table, "calibration JSON file")->required();
  app->add_option("--gpu", o->gpu,
                  "also check the table against this GPU as a shipped cluster has it, e.g. "
                  "\"H100\"");
  app->add_option("--cluster", o->cluster,
                  "also check the table against this cluster file's GPU (name, peaks, SMs, HBM)");
  app->add_option("--against", o->against,
                  "print each timed cell beside what a run on --cluster's GPU would price it at "
                  "with this other table");
  app->add_flag("--cells", o->cells, "with --against: every cell, not only each family's");
  return {app, [o](const std::string& /*command_line*/) {
            return check_calibration_command(o->table, o->gpu, o->cluster, o->against, o->cells);
          }};
}

}  // namespace hopsim::tools
