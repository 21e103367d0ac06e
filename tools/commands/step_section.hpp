// The report section of a training step ("step"): throughput, MFU, where the step's time
// went on its busiest pipeline rank, the simulated layers it was folded from, memory per GPU.
#pragma once

#include <nlohmann/json.hpp>

#include "tools/commands/step_figures.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// One GPU's memory term by term, GB (docs/training-step.md#memory): params_GB, grads_GB,
/// optimizer_GB, activations_GB, buffers_GB, fp8_weights_GB, reserve_GB, total_GB.
nlohmann::ordered_json memory_terms(const work::StageMemory& m);

/// The "step" object of one simulated training step (docs/report.md); `f` its figures.
nlohmann::ordered_json step_section(const work::CaseResult& c, const StepFigures& f);

}  // namespace hopsim::tools
