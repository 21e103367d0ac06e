// `hopsim run`: load, simulate, report.
#pragma once

#include <string>
#include <vector>

namespace hopsim::tools {

struct RunOptions {
  std::string experiment;
  std::vector<std::string> overrides;
  bool json = false;
  std::string out_dir;
  bool no_wall_time = false;
  std::string trace_file;  ///< Chrome trace of the run (the last size of a collective)
};

/// Returns the exit code: 0 ok, 1 the run failed. Throws config::ConfigError on bad input.
int run_command(const RunOptions& options);

}  // namespace hopsim::tools
