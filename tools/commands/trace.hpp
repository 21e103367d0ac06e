// Chrome trace-event JSON of a run (opens in Perfetto or chrome://tracing).
#pragma once

#include <nlohmann/json.hpp>

#include "workloads/plan/plan.hpp"
#include "workloads/plan/runner.hpp"

namespace hopsim::tools {

/// A process per GPU. Compute tasks are complete ("X") slices on the GPU's compute thread;
/// flows overlap freely, so each is an async slice ("b"/"e") on its sender's comm track, with
/// the destination and bytes as arguments. Times in microseconds, as the format wants.
nlohmann::json make_trace(const work::Plan& plan, const work::Outcome& outcome);

}  // namespace hopsim::tools
