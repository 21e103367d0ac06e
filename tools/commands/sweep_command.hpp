// `hopsim sweep`: one experiment over the cartesian product of varied keys, a CSV row a point.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/commands/command.hpp"

namespace hopsim::tools {

struct SweepOptions {
  std::string experiment;
  std::vector<std::string> overrides;  ///< --set, applied to every point first
  /// KEY=V1,V2,... (each value as --set reads it) or KEY=START:STOP:FACTOR (START, START x
  /// FACTOR, ... up to STOP).
  std::vector<std::string> vary;
  /// A JSON file: an array of points, each an object of dotted keys and values; its points
  /// multiply with --vary's (the grid varying slowest).
  std::string grid;
  std::string out;       ///< the CSV file; empty: standard output
  std::size_t jobs = 1;  ///< points simulated at once, each on its own thread
  bool resume = false;   ///< skip the points --out already has a row for
  std::string shard;     ///< "I/N", 1 <= I <= N: only the points whose index is I-1 modulo N
  /// The figure the closing lines rank points by (a CSV column); empty: tokens_per_s_per_gpu
  /// where the kind has it, else step_time_s.
  std::string rank_by;
  /// The command as typed, for the --resume line an interrupted sweep prints.
  std::string command_line;
};

/// The points of a sweep, in order: the --grid's points (when `grid` names a file) vary
/// slowest, then the --vary keys in order. Each point is the KEY=VALUE overrides that make it.
/// Throws config::ConfigError on a malformed --vary or grid file, or a key varied twice.
std::vector<std::vector<std::string>> sweep_points(const std::vector<std::string>& vary,
                                                   const std::string& grid = {});

/// `hopsim sweep-merge OUT.csv IN.csv...`: the rows of sweeps of the same header (shards, or
/// a sweep resumed elsewhere) into one CSV ordered by point, written atomically; a point in
/// two files keeps its first row. Returns 0. Throws config::ConfigError on an unreadable file,
/// headers that differ, rows of two sweeps (their sweep_id), or an `out` that is an input.
int sweep_merge_command(const std::string& out, const std::vector<std::string>& inputs);

/// `hopsim sweep-merge OUT IN...`: its options, and sweep_merge_command.
Command declare_sweep_merge_command(CLI::App& program);

/// Returns the exit code: 0 when every point ran (invalid points are rows, not failures), 1 when
/// some point failed at run time or the CSV could not be written, 130 when SIGINT or SIGTERM
/// stopped it (the points under way finish and are written first). Throws config::ConfigError
/// on a malformed command line, a --vary key the experiment does not have, an --out that is
/// one of its inputs, an --out file of another sweep (other keys, other values or another
/// sweep_id), or, once the rows are written, when every point is invalid (none ran).
int sweep_command(const SweepOptions& options);

/// `hopsim sweep EXPERIMENT`: its options, and sweep_command.
Command declare_sweep_command(CLI::App& program);

}  // namespace hopsim::tools
