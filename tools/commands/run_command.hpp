// `hopsim run`: load, run(), report.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hopsim::tools {

struct RunOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  bool json = false;
  std::string out_dir;  ///< report.json and config.json (and trace.json with --trace there)
  bool no_wall_time = false;
  std::string trace_file;      ///< Chrome trace of every case of the run
  std::size_t trace_links = 8;  ///< links whose load the trace draws (the busiest)
};

/// Returns the exit code: 0 ok, 1 the run failed or an output could not be written.
/// Throws config::ConfigError on bad input.
int run_command(const RunOptions& options);

}  // namespace hopsim::tools
