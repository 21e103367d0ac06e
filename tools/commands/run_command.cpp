// `hopsim run` for every workload kind: the library's run(), then the report and outputs.
#include "tools/commands/run_command.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands/command.hpp"
#include "tools/commands/output_file.hpp"
#include "tools/commands/report.hpp"
#include "tools/commands/trace.hpp"
#include "tools/commands/what_if.hpp"
#include "tools/config/experiment_file.hpp"
#include "tools/config/node.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {
namespace {

// --out DIR owns report.json, config.json and trace.json, written as one output under a lock
// on the folder: two runs into one folder wait for each other, and each leaves a matching pair.
// What this run does not write there is removed, so that no file of an earlier run is left
// beside the new report. `trace` is the trace's text when --trace names DIR/trace.json.
void write_out_dir(const RunOptions& o, const std::string& report, const std::string& config,
                   const std::optional<std::string>& trace) {
  namespace fs = std::filesystem;
  const fs::path dir(o.out_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw OutputError(fmt::format("{}: cannot create the output folder: {}", o.out_dir,
                                  ec ? ec.message() : "not a folder"));
  }
  const FolderLock lock(o.out_dir);
  // Temporary files of a run killed before its rename (a live run holds the lock): never valid
  // outputs, so remove them.
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    for (const char* owned : {".report.json.tmp.", ".config.json.tmp.", ".trace.json.tmp."}) {
      if (name.starts_with(owned)) {
        fs::remove(entry.path(), ec);
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> files{{(dir / "report.json").string(), report},
                                                         {(dir / "config.json").string(), config}};
  const fs::path trace_path = dir / "trace.json";
  if (trace) {
    files.emplace_back(trace_path.string(), *trace);
  }
  write_files_atomically(files);
  if (!trace && fs::is_regular_file(trace_path, ec)) {
    fs::remove(trace_path, ec);
  }
}

// Does --trace name DIR/trace.json of --out DIR?
bool traces_into_out_dir(const RunOptions& o) {
  namespace fs = std::filesystem;
  if (o.trace_file.empty() || o.out_dir.empty()) {
    return false;
  }
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(o.trace_file, ec);
  const fs::path b = fs::weakly_canonical(fs::path(o.out_dir) / "trace.json", ec);
  return !ec && a == b;
}

// --trace FILE and --out DIR's files (report.json, config.json, and trace.json, which a run
// may also remove) must not be files the experiment was read from.
void refuse_inputs(const RunOptions& o, const config::ExperimentFile& file) {
  if (!o.trace_file.empty()) {
    refuse_input("--trace " + o.trace_file, o.trace_file, file.inputs, "this run");
  }
  if (!o.out_dir.empty()) {
    for (const char* name : {"report.json", "config.json", "trace.json"}) {
      refuse_input("--out " + o.out_dir, (std::filesystem::path(o.out_dir) / name).string(),
                   file.inputs, "this run");
    }
  }
}

// The GPUs a trace draws when --trace-ranks does not say: all of a small run, else node 0's and
// the busiest.
std::set<topo::GpuId> default_trace_ranks(const work::Experiment& e,
                                          const work::RunResult& result) {
  std::size_t tasks = 0;
  std::size_t involved = 0;
  std::set<topo::GpuId> ranks;
  for (const work::CaseResult& c : result.cases) {
    tasks += c.plan.tasks().size();
    involved = std::max(involved, c.summary.involved);
    ranks.insert(c.summary.critical_rank);
  }
  if (tasks <= kTraceAllTasks) {
    return {};
  }
  for (int g = 0; g < e.cluster.gpus_per_node; ++g) {
    ranks.emplace(g);
  }
  fmt::print(stderr,
             "trace: {} of {} GPUs, node 0's and the busiest ({} tasks in all; --trace-ranks to "
             "choose)\n",
             ranks.size(), involved, tasks);
  return ranks;
}

// The run's options: links watched for the report (and the trace), and progress on stderr for
// runs of several cases that take a while (or on a terminal).
// Progress of a long case on a terminal: its simulated time and tasks, redrawn in place at
// most 4 times a second from its first second on; nothing in files or pipes.
std::function<void(const work::SimProgress&)> progress_line(bool terminal) {
  if (!terminal) {
    return {};
  }
  return [started = std::chrono::steady_clock::now(),
          last = 0.0](const work::SimProgress& p) mutable {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (elapsed < 1 || elapsed - last < 0.25) {
      return;
    }
    last = elapsed;
    fmt::print(stderr, "\r{}: {:.6g} s simulated, {} of {} tasks ({:.0f}%), {:.0f} s   ",
               p.what, p.now.seconds(), p.tasks_done, p.tasks,
               p.tasks > 0 ? 100.0 * static_cast<double>(p.tasks_done) /
                                 static_cast<double>(p.tasks)
                           : 0.0,
               elapsed);
    std::fflush(stderr);
  };
}

work::RunOptions run_options(const RunOptions& o) {
  work::RunOptions options;
  set_memory_limit(options, o.max_memory, o.force_memory);
  options.watch_links =
      o.trace_file.empty() ? work::kReportLinks : std::max(work::kReportLinks, o.trace_links);
  const auto started = std::chrono::steady_clock::now();
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  options.on_progress = progress_line(terminal);
  options.on_case = [started, terminal](std::size_t index, std::size_t count,
                                        const work::CaseResult& c) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (terminal && elapsed > 1) {
      fmt::print(stderr, "\r\033[K");  // the progress line, cleared
    }
    if (count > 1 && (terminal || elapsed > 2)) {
      fmt::print(stderr, "case {}/{} ({}) done, {:.1f} s\n", index + 1, count, c.name, elapsed);
    }
  };
  return options;
}

// The trace and --out folder, if asked for; false (with the reason on stderr) when one cannot
// be written.
bool write_outputs(const RunOptions& o, const config::ExperimentFile& file,
                   const work::RunResult& result,
                   const std::optional<nlohmann::ordered_json>& report,
                   const std::set<topo::GpuId>& ranks) {
  try {
    std::optional<std::string> trace;
    if (!o.trace_file.empty()) {
      trace = make_trace(result, o.trace_links, ranks).dump() + "\n";
    }
    const bool with_out = traces_into_out_dir(o);
    if (trace && !with_out) {
      write_file_atomically(o.trace_file, *trace);
    }
    if (!o.out_dir.empty()) {
      write_out_dir(o, report->dump(2) + "\n", file.resolved.dump(2) + "\n",
                    with_out ? trace : std::nullopt);
    }
  } catch (const OutputError& e) {
    fmt::print(stderr, "{}\n", e.what());
    return false;
  }
  return true;
}

}  // namespace

int run_command(const RunOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  if (o.no_fold) {
    overrides.emplace_back("workload.fold=false");
  }
  const config::ExperimentFile file = config::load_experiment(o.experiment, overrides);
  std::set<topo::GpuId>
      ranks;  // the GPUs a trace draws; read before the run, so a bad list fails first
  if (!o.trace_ranks.empty()) {
    if (o.trace_file.empty()) {
      throw config::ConfigError("--trace-ranks needs --trace FILE");
    }
    ranks = parse_trace_ranks(o.trace_ranks, file.experiment.cluster.gpu_count());
  }
  refuse_inputs(o, file);
  for (const std::string& w : file.hardware_warnings) {
    fmt::print(stderr, "warning: {}\n", w);
  }
  const work::RunResult result = work::run(file.experiment, run_options(o));
  if (!result.ok()) {
    file.fail(result.problems.front());
  }
  for (const std::string& line : what_if_lines(file, result)) {
    fmt::print(stderr, "{}\n", line);
  }
  if (const std::size_t stuck = result.stuck(); stuck > 0) {
    fmt::print(stderr, "{}: {} tasks never ran (a dependency cycle)\n", o.experiment, stuck);
    return 1;
  }
  const ReportInput in{file, result, !o.no_wall_time};
  // The JSON report only where it is printed or written: a text run's summary is formatted
  // from the typed results, and the report of a big flow list (a row per flow) is not free.
  std::optional<nlohmann::ordered_json> report;
  if (o.json || !o.out_dir.empty()) {
    report = make_report(in);
  }
  if (!o.trace_file.empty() && o.trace_ranks.empty()) {
    ranks = default_trace_ranks(file.experiment, result);
  }
  if (!write_outputs(o, file, result, report, ranks)) {
    return 1;
  }
  if (o.json) {
    fmt::print("{}\n", report->dump(2));
  } else {
    fmt::print("{}", format_summary(in));
  }
  return 0;
}

namespace {

// A number from the first line of `path`, or `fallback` when it cannot be read ("max": none).
double file_number(const char* path, double fallback) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") {
    return fallback;
  }
  try {
    return std::stod(word);
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

double available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  double bytes = std::numeric_limits<double>::infinity();
  while (meminfo >> key >> kb >> unit) {
    if (key == "MemAvailable:") {
      bytes = kb * 1024;
      break;
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  const double cgroup_max = file_number("/sys/fs/cgroup/memory.max", inf);
  if (std::isfinite(cgroup_max)) {
    bytes = std::min(bytes, cgroup_max - file_number("/sys/fs/cgroup/memory.current", 0));
  }
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    bytes = std::min(bytes, static_cast<double>(as.rlim_cur));
  }
  return std::isfinite(bytes) ? std::max(bytes, 0.0) : 0.0;
}

double default_memory_limit_bytes() { return kDefaultMemoryShare * available_memory_bytes(); }

double parse_memory_size(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) {
    unit.pop_back();
  }
  static const std::vector<std::pair<std::string, double>> kUnits{
      {"", 1}, {"K", 1e3}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}};
  const auto it = std::ranges::find(kUnits, unit, &std::pair<std::string, double>::first);
  if (used == 0 || it == kUnits.end() || !(value > 0) || !std::isfinite(value)) {
    throw config::ConfigError(fmt::format(
        "--max-memory {}: expected a positive size in bytes, e.g. 8G, 500M or 2.5e9",
        config::echo(text, 40)));
  }
  return value * it->second;
}

void set_memory_limit(work::RunOptions& options, const std::string& max_memory, bool force) {
  if (force) {
    return;
  }
  options.memory_hint = " (--force-memory builds it anyway)";
  if (!max_memory.empty()) {
    options.memory_limit_bytes = parse_memory_size(max_memory);
    options.memory_limit_source = " (--max-memory)";
  } else {
    options.memory_limit_bytes = default_memory_limit_bytes();
    options.memory_limit_source =
        fmt::format(" ({:.0f}% of the memory available; --max-memory sets it)",
                    kDefaultMemoryShare * 100);
  }
}

Command declare_run_command(CLI::App& program) {
  auto s = std::make_shared<WithUnsets<RunOptions>>();
  RunOptions& o = s->options;
  CLI::App* app = program.add_subcommand("run", "simulate an experiment and report");
  app->add_option("experiment", o.experiment, "experiment JSON file")->required();
  app->add_option("--set", o.overrides,
                  "override a config key: KEY=VALUE (dotted path; VALUE null removes it)");
  app->add_option("--unset", s->unset, "remove an optional key: --set KEY=null");
  app->add_flag("--json", o.json, "print the report as JSON instead of a summary");
  app->add_option("--out", o.out_dir,
                  "write report.json and config.json into DIR (atomically; a stale trace.json "
                  "there is removed)");
  app->add_option("--trace", o.trace_file,
                  "write a Chrome trace (Perfetto) of every case of the run to FILE");
  app->add_option("--trace-links", o.trace_links,
                  "links whose load the trace draws, the busiest first (default 8)");
  app->add_option("--trace-ranks", o.trace_ranks,
                  "GPUs the trace draws, e.g. 0-7,64 (default: all of a run of up to 64 GPUs, "
                  "else node 0's and the busiest)");
  app->add_flag("--no-fold", o.no_fold,
                "a training step with every GPU in one plan (workload.fold=false), to check the "
                "folded one on a small cluster");
  app->add_option("--max-memory", o.max_memory,
                  "refuse a run whose plan is estimated above SIZE (8G, 500M; default 80% of "
                  "the memory available)");
  app->add_flag("--force-memory", o.force_memory,
                "build a plan even when its estimate exceeds the memory limit");
  app->add_flag("--no-wall-time", o.no_wall_time,
                "leave sim.wall_s out of the report, so that reruns are byte-identical");
  return {app, [s](const std::string& /*command_line*/) { return run_command(s->resolved()); }};
}

}  // namespace hopsim::tools
