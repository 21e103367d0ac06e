// What a run's --set overrides did: one line each saying what it changed in the resolved
// experiment, and warnings for overrides that change nothing this run could see.
#pragma once

#include <string>
#include <vector>

#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// Lines for stderr, one per override of `file` ("--set KEY=VALUE: KEY: BEFORE -> AFTER"),
/// each followed by its warning where it changes nothing: the value it already had, a key that
/// was not there to remove, a link's peak while the simulated links carry its achievable
/// figure, a cluster size that the workload's mesh does not use (from `result`'s cases); then
/// a warning for each perturbation that changes nothing (idle_perturbations), whether the
/// experiment or a --set gave it.
std::vector<std::string> what_if_lines(const config::ExperimentFile& file,
                                       const work::RunResult& result);

}  // namespace hopsim::tools
