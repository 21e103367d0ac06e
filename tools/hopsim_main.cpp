// hopsim: the command-line program (run, sweep, sweep-merge, regress, compare, explain,
// check-calibration, profile-check, schema, list).
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands/check_calibration_command.hpp"
#include "tools/commands/compare_command.hpp"
#include "tools/commands/explain_command.hpp"
#include "tools/commands/list_command.hpp"
#include "tools/commands/output_file.hpp"
#include "tools/commands/export_chakra_command.hpp"
#include "tools/commands/profile_check_command.hpp"
#include "tools/commands/regress_command.hpp"
#include "tools/commands/run_command.hpp"
#include "tools/commands/schema_command.hpp"
#include "tools/commands/sweep_command.hpp"
#include "tools/config/node.hpp"
#include "tools/version.hpp"

namespace {

// A message shows at most this many characters of itself (the rest is counted).
constexpr std::size_t kMaxMessage = 1000;

struct Commands {
  hopsim::tools::RunOptions run;
  hopsim::tools::RunOptions explain;
  hopsim::tools::SweepOptions sweep;
  hopsim::tools::RegressOptions regress;
  hopsim::tools::CompareOptions compare;
  hopsim::tools::ProfileCheckOptions profile;
  hopsim::tools::ExportChakraOptions export_chakra;
  std::vector<std::string> unset_export;
  std::vector<std::string> unset_profile;
  std::int64_t profile_device = -1;  ///< -1: every GPU
  std::string merge_out;
  std::vector<std::string> merge_inputs;
  std::string table;
  std::string gpu;
  std::string cluster;
  std::string against;
  bool cells = false;
  bool markdown = false;
  std::vector<std::string> unset_run;  ///< --unset KEY: --set KEY=null
  std::vector<std::string> unset_sweep;
  std::vector<std::string> unset_explain;
  CLI::App* run_cmd = nullptr;
  CLI::App* explain_cmd = nullptr;
  CLI::App* sweep_cmd = nullptr;
  CLI::App* regress_cmd = nullptr;
  CLI::App* compare_cmd = nullptr;
  CLI::App* merge_cmd = nullptr;
  CLI::App* check_cmd = nullptr;
  CLI::App* schema_cmd = nullptr;
  CLI::App* list_cmd = nullptr;
  CLI::App* profile_cmd = nullptr;
  CLI::App* export_cmd = nullptr;
};

// The command line as a shell would read it back: words with anything but plain characters
// in single quotes.
std::string shell_words(int argc, char** argv) {
  constexpr std::string_view kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%";
  std::string out;
  for (int i = 0; i < argc; ++i) {
    const std::string w(argv[i]);
    std::string word = w;
    if (w.empty() || w.find_first_not_of(kPlain) != std::string::npos) {
      word = "'";
      for (const char ch : w) {
        word += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      }
      word += "'";
    }
    out += (i == 0 ? "" : " ") + word;
  }
  return out;
}

// `hopsim profile-check TRACE EXPERIMENT`.
void add_profile_check(CLI::App& app, Commands& c) {
  hopsim::tools::ProfileCheckOptions& p = c.profile;
  c.profile_cmd = app.add_subcommand(
      "profile-check", "a PyTorch profiler trace beside hopsim's prediction, by kernel class");
  c.profile_cmd->add_option("trace", p.trace, "the trace (Chrome/Kineto JSON, plain or gzip)")
      ->required();
  c.profile_cmd->add_option("experiment", p.experiment, "the experiment meant to describe it")
      ->required();
  c.profile_cmd->add_option("--set", p.overrides, "override an experiment key: KEY=VALUE");
  c.profile_cmd->add_option("--unset", c.unset_profile, "remove an optional key: --set KEY=null");
  c.profile_cmd->add_option("--rules", p.rules,
                            "kernel classification rules (default: the shipped "
                            "configs/profile/kernel-classes.json)");
  c.profile_cmd->add_option("--case", p.case_name,
                            "the experiment's case to compare with (default: its only one)");
  c.profile_cmd->add_option("--steps", p.steps,
                            "profiler steps the trace covers (default: its ProfilerStep#N "
                            "annotations, else 1)");
  c.profile_cmd
      ->add_option("--device", c.profile_device,
                   "count only this GPU's kernels (default: every GPU, averaged)")
      ->check(CLI::NonNegativeNumber);
  c.profile_cmd->add_option("--unmatched", p.unmatched,
                            "unclassified kernel names to list, the longest first (default 5)");
  c.profile_cmd->add_flag("--json", p.json, "print the check as JSON");
  c.profile_cmd->add_option("--write-calibration", p.write_calibration,
                            "also write the trace's GEMM and norm kernels (with their shapes) "
                            "as a calibration table");
}

void add_commands(CLI::App& app, Commands& c) {
  hopsim::tools::RunOptions& o = c.run;
  c.run_cmd = app.add_subcommand("run", "simulate an experiment and report");
  c.run_cmd->add_option("experiment", o.experiment, "experiment JSON file")->required();
  c.run_cmd->add_option("--set", o.overrides,
                        "override a config key: KEY=VALUE (dotted path; VALUE null removes it)");
  c.run_cmd->add_option("--unset", c.unset_run, "remove an optional key: --set KEY=null");
  c.run_cmd->add_flag("--json", o.json, "print the report as JSON instead of a summary");
  c.run_cmd->add_option("--out", o.out_dir,
                        "write report.json and config.json into DIR (atomically; a stale "
                        "trace.json there is removed)");
  c.run_cmd->add_option("--trace", o.trace_file,
                        "write a Chrome trace (Perfetto) of every case of the run to FILE");
  c.run_cmd->add_option("--trace-links", o.trace_links,
                        "links whose load the trace draws, the busiest first (default 8)");
  c.run_cmd->add_option("--trace-ranks", o.trace_ranks,
                        "GPUs the trace draws, e.g. 0-7,64 (default: all of a run of up to 64 "
                        "GPUs, else node 0's and the busiest)");
  c.run_cmd->add_flag("--no-fold", o.no_fold,
                      "a training step with every GPU in one plan (workload.fold=false), to "
                      "check the folded one on a small cluster");
  c.run_cmd->add_flag("--force-memory", o.force_memory,
                      "build a plan even when its estimate exceeds the memory available");
  c.run_cmd->add_flag("--no-wall-time", o.no_wall_time,
                      "leave sim.wall_s out of the report, so that reruns are byte-identical");
  hopsim::tools::SweepOptions& w = c.sweep;
  c.sweep_cmd = app.add_subcommand(
      "sweep", "run an experiment over every combination of varied keys; a CSV row per point");
  c.sweep_cmd->add_option("experiment", w.experiment, "experiment JSON file")->required();
  c.sweep_cmd->add_option("--vary", w.vary,
                          "KEY=V1,V2,... or KEY=START:STOP:FACTOR; several --vary multiply");
  c.sweep_cmd->add_option("--grid", w.grid,
                          "a JSON array of points, each an object of KEY: VALUE; multiplies with "
                          "--vary");
  c.sweep_cmd->add_option("--set", w.overrides, "override a config key for every point");
  c.sweep_cmd->add_option("--unset", c.unset_sweep, "remove an optional key for every point");
  c.sweep_cmd->add_option("--out", w.out,
                          "write the rows to this CSV file, afresh (with --resume: after its "
                          "rows); default: stdout");
  c.sweep_cmd->add_option("--rank-by", w.rank_by,
                          "the figure the closing lines rank points by (default "
                          "tokens_per_s_per_gpu where the kind has it, else step_time_s)");
  c.sweep_cmd->add_option("--jobs", w.jobs, "points simulated at once, on threads (default 1)");
  c.sweep_cmd->add_flag("--resume", w.resume, "skip the points --out already has rows for");
  c.sweep_cmd->add_option("--shard", w.shard,
                          "I/N: run only every N-th point from the I-th, I from 1 (a job array)");
  c.regress_cmd = app.add_subcommand(
      "regress", "rerun a suite of experiments and compare their times with expected reports");
  c.regress_cmd->add_option("dir", c.regress.dir,
                            "folder with suite.json and the expected reports (default "
                            "tests/golden)");
  c.regress_cmd->add_option("--tolerance", c.regress.tolerance,
                            "relative change that fails (default 0.01)");
  c.regress_cmd->add_flag("--update", c.regress.update, "rewrite the expected reports");
  c.regress_cmd->add_option("--junit", c.regress.junit,
                            "also write the results as JUnit XML to FILE (for CI)");
  c.merge_cmd = app.add_subcommand(
      "sweep-merge", "merge the CSVs of one sweep's shards into one, ordered by point");
  c.merge_cmd->add_option("out", c.merge_out, "the merged CSV (written atomically)")->required();
  c.merge_cmd->add_option("inputs", c.merge_inputs, "the shards' CSVs")->required();
  c.compare_cmd = app.add_subcommand(
      "compare", "two reports side by side (run --json or --out), with the change in each figure");
  c.compare_cmd->add_option("a", c.compare.a, "the first report (A)")->required();
  c.compare_cmd->add_option("b", c.compare.b, "the second report (B)")->required();
  c.compare_cmd->add_flag("--json", c.compare.json, "print the comparison as JSON");
  hopsim::tools::RunOptions& x = c.explain;
  c.explain_cmd = app.add_subcommand("explain", "print the closed-form numbers of an experiment");
  c.explain_cmd->add_option("experiment", x.experiment, "experiment JSON file")->required();
  c.explain_cmd->add_option("--set", x.overrides,
                            "override a config key: KEY=VALUE (dotted path; VALUE null removes "
                            "it)");
  c.explain_cmd->add_option("--unset", c.unset_explain, "remove an optional key: --set KEY=null");
  c.explain_cmd->add_flag("--json", x.json, "print JSON instead of a summary");
  c.check_cmd = app.add_subcommand(
      "check-calibration", "read a calibration table as the simulator does and summarize it");
  c.check_cmd->add_option("table", c.table, "calibration JSON file")->required();
  c.check_cmd->add_option("--gpu", c.gpu, "also check that the table fits this GPU, e.g. \"H100\"");
  c.check_cmd->add_option("--cluster", c.cluster,
                          "also check the table against this cluster file's GPU (name, peaks, "
                          "SMs, HBM)");
  c.check_cmd->add_option("--against", c.against,
                          "print each timed cell beside what a run on --cluster's GPU would price "
                          "it at with this other table");
  c.check_cmd->add_flag("--cells", c.cells, "with --against: every cell, not only each family's");
  c.list_cmd = app.add_subcommand(
      "list", "list the presets an experiment can name (clusters, models, calibration tables)");
  c.schema_cmd = app.add_subcommand("schema", "list every config key the parser accepts");
  c.schema_cmd->add_flag("--markdown", c.markdown, "print the reference as Markdown (docs/)");
  add_profile_check(app, c);
  hopsim::tools::ExportChakraOptions& ex = c.export_chakra;
  c.export_cmd = app.add_subcommand(
      "export-chakra", "write what hopsim simulated as Chakra execution traces, one per GPU");
  c.export_cmd->add_option("experiment", ex.experiment, "experiment JSON file")->required();
  c.export_cmd->add_option("--out", ex.out, "folder for the .et files and the replay experiment")
      ->required();
  c.export_cmd->add_option("--set", ex.overrides, "override an experiment key: KEY=VALUE");
  c.export_cmd->add_option("--unset", c.unset_export, "remove an optional key: --set KEY=null");
  c.export_cmd->add_option("--case", ex.case_name,
                           "the case to export (a collective's size); default: the only one");
}

int dispatch(const Commands& c) {
  if (c.check_cmd->parsed()) {
    return hopsim::tools::check_calibration_command(c.table, c.gpu, c.cluster, c.against, c.cells);
  }
  if (c.list_cmd->parsed()) {
    return hopsim::tools::list_command();
  }
  if (c.schema_cmd->parsed()) {
    return hopsim::tools::schema_command(c.markdown);
  }
  if (c.regress_cmd->parsed()) {
    return hopsim::tools::regress_command(c.regress);
  }
  if (c.merge_cmd->parsed()) {
    return hopsim::tools::sweep_merge_command(c.merge_out, c.merge_inputs);
  }
  if (c.compare_cmd->parsed()) {
    return hopsim::tools::compare_command(c.compare);
  }
  if (c.profile_cmd->parsed()) {
    return hopsim::tools::profile_check_command(c.profile);
  }
  if (c.export_cmd->parsed()) {
    return hopsim::tools::export_chakra_command(c.export_chakra);
  }
  if (c.sweep_cmd->parsed()) {
    return hopsim::tools::sweep_command(c.sweep);
  }
  if (c.explain_cmd->parsed()) {
    return hopsim::tools::explain_command(c.explain);
  }
  return hopsim::tools::run_command(c.run);
}

int run_cli(int argc, char** argv) {
  CLI::App app{"hopsim: a discrete-event simulator of GPU training clusters"};
  app.set_version_flag("--version", fmt::format("hopsim {}", hopsim::tools::version()));
  app.require_subcommand(1);
  Commands c;
  add_commands(app, c);
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string name = argv[1];
    const auto subcommands = app.get_subcommands([&](CLI::App* s) { return s->get_name() == name; });
    if (subcommands.empty()) {
      fmt::print(stderr,
                 "hopsim: unknown command \"{:.40}\"; the commands are run, sweep, sweep-merge, "
                 "regress, compare, explain, check-calibration, profile-check, export-chakra, "
                 "schema and list (hopsim --help)\n",
                 name);
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  c.sweep.command_line = shell_words(argc, argv);
  if (c.profile_device >= 0) {
    c.profile.device = c.profile_device;
  }
  for (auto [keys, overrides] : {std::pair{&c.unset_run, &c.run.overrides},
                                 std::pair{&c.unset_sweep, &c.sweep.overrides},
                                 std::pair{&c.unset_explain, &c.explain.overrides},
                                 std::pair{&c.unset_profile, &c.profile.overrides},
                                 std::pair{&c.unset_export, &c.export_chakra.overrides}}) {
    for (const std::string& key : *keys) {
      overrides->push_back(key + "=null");
    }
  }
  try {
    const int code = dispatch(c);
    // Output is buffered: a full disk or a closed pipe shows only when it is flushed.
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
      fmt::print(stderr, "hopsim: cannot write to standard output: {}\n", std::strerror(errno));
      return 1;
    }
    return code;
  } catch (const hopsim::config::ConfigError& e) {
    // One line, bounded, whatever user text the message quotes.
    fmt::print(stderr, "{}\n", hopsim::config::echo(e.what(), kMaxMessage));
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 2;
  } catch (const hopsim::tools::OutputError& e) {  // a file that could not be written
    fmt::print(stderr, "{}\n", hopsim::config::echo(e.what(), kMaxMessage));
    return 1;
  } catch (const std::system_error& e) {  // fmt::print to a full disk or a closed pipe
    fmt::print(stderr, "hopsim: cannot write to standard output: {}\n", e.what());
    return 1;
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
