// `hopsim run`: load, run(), report.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/commands/command.hpp"

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
  /// Build a plan even when its estimate exceeds the memory available (MemAvailable).
  bool force_memory = false;
};

/// Runs of more tasks (kernels and flows, all cases) than this trace a few GPUs unless
/// --trace-ranks says which: about 50 MB of trace.
inline constexpr std::size_t kTraceAllTasks = 200000;

/// The memory this machine has available (MemAvailable of /proc/meminfo), or 0 when unknown:
/// the limit every command that runs an experiment gives run() (RunOptions::memory_limit_bytes).
double available_memory_bytes();

/// Returns the exit code: 0 ok, 1 the run failed or an output could not be written.
/// Throws config::ConfigError on bad input.
int run_command(const RunOptions& options);

/// `hopsim run EXPERIMENT`: its options, and run_command.
Command declare_run_command(CLI::App& program);

}  // namespace hopsim::tools
