// The run report as JSON (docs/report.md), and the human summary printed on stdout.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// What a report and a summary are written from: the experiment file and its run.
struct ReportInput {
  const config::ExperimentFile& file;
  const work::RunResult& result;
  bool wall_time = true;  ///< include sim.wall_s (the only field that differs between runs)
};

/// What was run on what, one summary per case under "results" (and at the top level when
/// there is one case), engine statistics, and the workload kind's own section.
nlohmann::ordered_json make_report(const ReportInput& in);

/// A readable summary of the run for a terminal: the figures of the report, from the same
/// typed results and figures (not from the JSON).
std::string format_summary(const ReportInput& in);

}  // namespace hopsim::tools
