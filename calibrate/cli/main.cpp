// hopsim-calibrate: times real kernels into a calibration table; plans runs; merges shards.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/core/grid.hpp"
#include "calibrate/core/lt_spec.hpp"
#include "calibrate/core/merge.hpp"
#include "calibrate/core/plan.hpp"
#include "calibrate/core/run_options.hpp"
#include "calibrate/core/table_json.hpp"

namespace {

using namespace hopsim::calib;

int merge_command(const std::vector<std::string>& args) {
  if (args.size() < 2) {
    fmt::print(stderr, "--merge needs OUT.json and at least one input\n");
    return 2;
  }
  std::vector<CalibrationFile> inputs;
  for (std::size_t i = 1; i < args.size(); ++i) {
    inputs.push_back(read_calibration_file(args[i]));
  }
  const MergeResult merged = merge_files(inputs, utc_now());
  for (const std::string& note : merged.notes) {
    fmt::print(stderr, "note: {}\n", note);
  }
  write_calibration_file(args[0], merged.file);
  std::size_t cells = 0;
  for (const Table& t : merged.file.tables) {
    cells += t.measured_cells();
  }
  fmt::print(stderr, "merged {} inputs into {}: {} tables, {} measured cells\n", inputs.size(),
             args[0], merged.file.tables.size(), cells);
  return 0;
}

/// The FP8 descriptors a run uses (at the FP8 ceiling's 8192³), and whether each meets the
/// documented requirements.
void print_fp8_descriptors() {
  for (Fp8Recipe recipe : {Fp8Recipe::Tensor, Fp8Recipe::Block128}) {
    const LtMatmulSpec spec =
        lt_matmul_spec(Dtype::Fp8, 8192, 8192, 8192, GemmOutput::Bf16, true, recipe);
    const std::vector<std::string> failures = lt_requirement_failures(spec);
    fmt::print("FP8 descriptor, recipe {} (gemm impl {}; {}):\n{}  documented FP8 requirements: {}\n",
               to_string(recipe), gemm_impl(recipe), recipe_text(recipe), describe(spec),
               failures.empty() ? "all met" : fmt::format("BROKEN: {}", fmt::join(failures, "; ")));
  }
}

int dry_run_command(const RunOptions& o) {
  const Grid grid = make_grid(o.grid);
  const std::vector<GridPoint> points = shard_points(grid_points(grid, o.suite), o.shard);
  std::fputs(
      format_plan(grid, points, o.measure, EstimateModel{}, o.budget_s, o.shard_text).c_str(),
      stdout);
  if (suite_includes(o.suite, Op::Gemm)) {
    print_fp8_descriptors();
  }
  if (!o.out.empty()) {
    // The grid's tables with every cell null: the exact file a run fills in, for checking that
    // the simulator reads what the harness writes (no GPU needed).
    CalibrationFile skeleton;
    skeleton.created_utc = utc_now();
    skeleton.device = {{"name", "dry run (no device)"}};
    skeleton.method = default_method();
    for (const TableSpec& spec : grid.tables) {
      skeleton.tables.push_back(empty_table(spec));
    }
    write_calibration_file(o.out, skeleton);
    fmt::print(stderr, "wrote the {} empty tables of the plan to {}\n", skeleton.tables.size(),
               o.out);
  }
  return 0;
}

int run_cli(int argc, char** argv) {
  CLI::App app{"hopsim-calibrate: time GEMMs, expert GEMMs and attention on a CUDA device"};
  RunOptions o;
  std::string suite = "all";
  bool dry_run = false;
  std::vector<std::string> merge_args;
  app.add_option("--out", o.out, "write the calibration table to this JSON file");
  app.add_option("--grid", o.grid, "shape grid: smoke or full")
      ->check(CLI::IsMember({"smoke", "full"}));
  app.add_option("--shard", o.shard_text, "measure shard i of n (i/n), e.g. 0/4");
  app.add_option("--suite", suite, "all, gemm, experts, attn or memory")
      ->check(CLI::IsMember({"all", "gemm", "experts", "attn", "memory"}));
  app.add_option("--budget-s", o.budget_s, "stop timing after this many seconds (0 = no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--dry-run", dry_run, "print the plan and estimated device time; needs no GPU");
  app.add_flag("--check-only", o.check_only, "run the correctness checks only");
  app.add_option("--merge", merge_args, "OUT.json IN1.json [IN2.json ...]: merge shard outputs");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (!merge_args.empty()) {
      return merge_command(merge_args);
    }
    o.suite = parse_suite(suite);
    o.shard = parse_shard(o.shard_text);
    if (dry_run) {
      return dry_run_command(o);
    }
    if (o.out.empty() && !o.check_only) {
      fmt::print(stderr,
                 "--out TABLE.json is required (or use --dry-run, --check-only, --merge)\n");
      return 2;
    }
    return run_measurement(o);
  } catch (const CalibError& e) {
    fmt::print(stderr, "hopsim-calibrate: {}\n", e.what());
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    fmt::print(stderr, "hopsim-calibrate: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "hopsim-calibrate: {}\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    fmt::print(stderr, "hopsim-calibrate: {}\n", e.what());
  } catch (...) {
    fmt::print(stderr, "hopsim-calibrate: unknown error\n");
  }
  return 1;
}
