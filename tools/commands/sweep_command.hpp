// `hopsim sweep`: one experiment over the cartesian product of varied keys, a CSV row a point.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hopsim::tools {

struct SweepOptions {
  std::string experiment;
  std::vector<std::string> overrides;  ///< --set, applied to every point first
  /// KEY=V1,V2,... (each value as --set reads it) or KEY=START:STOP:FACTOR (START, START x
  /// FACTOR, ... up to STOP).
  std::vector<std::string> vary;
  std::string out;       ///< the CSV file; empty: standard output
  std::size_t jobs = 1;  ///< points simulated at once, each on its own thread
  bool resume = false;   ///< skip the points --out already has a row for
  std::string shard;     ///< "I/N", 1 <= I <= N: only the points whose index is I-1 modulo N
};

/// The points of a sweep, in order: the first --vary key varies slowest. Each point is the
/// KEY=VALUE overrides that make it. Throws config::ConfigError on a malformed --vary.
std::vector<std::vector<std::string>> sweep_points(const std::vector<std::string>& vary);

/// Returns the exit code: 0 when every point ran (invalid points are rows, not failures), 1 when
/// some point failed at run time or the CSV could not be written. Throws config::ConfigError
/// on a malformed command line or an --out file of another sweep.
int sweep_command(const SweepOptions& options);

}  // namespace hopsim::tools
