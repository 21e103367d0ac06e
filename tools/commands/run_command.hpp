// `hopsim run`: load, run(), report.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/commands/command.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

struct RunOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  bool json = false;
  std::string out_dir;  ///< report.json and config.json (and trace.json with --trace there)
  bool no_wall_time = false;
  bool no_fold = false;  ///< a training step with every GPU in one plan (workload.fold=false)
  std::string trace_file;      ///< Chrome trace of every case of the run
  std::size_t trace_links = 8;  ///< links whose load the trace draws (the busiest)
  /// GPUs the trace draws: "0-7,64" (ranges and single ranks); empty: every GPU of a run of
  /// at most kTraceAllTasks tasks, else node 0's and the busiest one.
  std::string trace_ranks;
  /// Build a plan even when its estimate exceeds the memory limit.
  bool force_memory = false;
  /// The memory limit, "8G", "500M", "2.5e9" (bytes; K, M, G, T are powers of 1000); empty:
  /// default_memory_limit_bytes().
  std::string max_memory;
};

/// Runs of more tasks (kernels and flows, all cases) than this trace a few GPUs unless
/// --trace-ranks says which: about 50 MB of trace.
inline constexpr std::size_t kTraceAllTasks = 200000;

/// The memory this process may use: the least of MemAvailable (/proc/meminfo), the cgroup's
/// memory.max less what it uses (cgroup v2), and the address-space limit (ulimit -v); 0 when
/// none is known.
double available_memory_bytes();

/// The plan memory limit when --max-memory does not say: kDefaultMemoryShare of
/// available_memory_bytes() (the rest for the solver's peaks the estimates miss, and the
/// machine's other work); 0 (no limit) when nothing is known.
inline constexpr double kDefaultMemoryShare = 0.8;
double default_memory_limit_bytes();

/// --max-memory's value in bytes: a positive number with an optional K, M, G or T (powers of
/// 1000, a trailing B allowed). Throws config::ConfigError naming the flag.
double parse_memory_size(const std::string& text);

/// The limit and its note for work::RunOptions: --max-memory's, or the default; none with
/// --force-memory.
void set_memory_limit(work::RunOptions& options, const std::string& max_memory, bool force);

/// Returns the exit code: 0 ok, 1 the run failed or an output could not be written.
/// Throws config::ConfigError on bad input.
int run_command(const RunOptions& options);

/// `hopsim run EXPERIMENT`: its options, and run_command.
Command declare_run_command(CLI::App& program);

}  // namespace hopsim::tools
