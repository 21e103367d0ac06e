// Perturbations that change nothing in a run: an identity (a speed or bandwidth of 1), GPUs
// that run no kernel, links that no flow crosses. One check for the experiment's own list and
// for --set perturbations=..., which what_if_lines prints among the overrides' warnings.
#pragma once

#include <string>
#include <vector>

#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// One line per entry of the experiment's `perturbations` that changes no task's time and no
/// flow's path in `result` ("WHERE: /perturbations/I: changes nothing...: REASON", WHERE the
/// file or the --set argument that wrote it). `run`, `sweep` (each point) and `explain` (no
/// run: null) all check with it:
///   - an identity: compute_speed 1 with no kernel_speed draw (or a draw of [1, 1]); links at
///     bandwidth 1 with no extra latency, not failed;
///   - GPUs that run no kernel: where every case ran its whole plan, in any case; else (a
///     folded step, whose probes stand for GPUs they do not name, or no run) by the kind: none
///     for flows and collectives, the mesh's GPUs for layers and steps (a trace's: unknown);
///   - where every case ran its whole plan: links that no flow of any case would cross on the
///     healthy fabric (a failure that no flow had to go round).
std::vector<std::string> idle_perturbations(const config::ExperimentFile& file,
                                            const work::RunResult* result);

}  // namespace hopsim::tools
