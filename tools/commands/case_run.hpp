// An experiment run for a command that reads one of its cases (profile-check, export-chakra).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

struct CaseRun {
  config::ExperimentFile file;
  work::RunResult result;
  std::size_t index = 0;  ///< the picked case's, in result.cases

  const work::CaseResult& picked() const { return result.cases[index]; }
};

/// Loads `experiment` with `overrides` and runs it as `run` would (no link loads watched; the
/// memory available as its limit, without --force-memory), then picks the case named
/// `case_name`, or the only one when it is empty. Bad input, an experiment that cannot run and
/// a case that is not there (or not named among several) are one config::ConfigError.
CaseRun run_for_case(const std::string& experiment, const std::vector<std::string>& overrides,
                     const std::string& case_name);

}  // namespace hopsim::tools
