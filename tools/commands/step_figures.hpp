// What a training step's report derives from its run: throughput and MFU, where the busiest
// pipeline rank's step went, each simulated layer's compute over communication, memory peak.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/commands/validation_figures.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// A window of a pipeline rank's step: its length and the time its ops left idle in it.
struct PipelineWindow {
  double s = 0;
  double idle_s = 0;
};

/// Warm-up (until the first backward), steady state (until the last forward ends) and
/// cool-down (until the last op ends).
struct PipelinePhases {
  PipelineWindow warm_up;
  PipelineWindow steady;
  PipelineWindow cool_down;
};

/// Where the busiest pipeline rank's step went. Its ops' time includes each layer's own
/// exposed TP, CP and EP communication (split out from the simulated layers); the rest is
/// what the step plan shows: waiting on the pipeline (bubble, activation transfers), gradient
/// sync not hidden under the backward, the optimizer, the parameter all-gather.
struct StepBreakdown {
  int pipeline_rank = 0;  ///< the one with the most forward and backward work
  int gpu = 0;            ///< the GPU simulated for it
  double forward_backward_s = 0;
  /// forward_backward_s by pass: "forward", "backward" (DualPipe: the input part where the
  /// weight part is deferred), "backward_weight" (DualPipe's deferred weight parts), "pair"
  /// (DualPipe's overlapped forward-backward pairs).
  std::vector<std::pair<std::string, double>> ops_by_pass_s;
  /// The ops' exposed layer communication per kind, per step (and ZeRO-3's unhidden
  /// parameter gathers), and the ops' time less it; unset with DualPipe, whose overlapped
  /// pairs hide what a layer alone shows.
  std::optional<std::map<std::string, double>> exposed_layer_comm_s;
  std::optional<double> compute_s;
  double bubble_s = 0;
  double bubble_fraction = 0;  ///< of the step
  PipelinePhases phases;
  double dp_exposed_s = 0;  ///< from the last backward's end to the optimizer's start
  double optimizer_s = 0;
  double param_gather_s = 0;
  double step_overhead_s = 0;  ///< the framework's fixed cost at the step's end
};

/// The largest memory of a pipeline rank against the GPU's HBM.
struct MemoryPeak {
  double hbm_GB = 0;
  double peak_GB = 0;
  bool fits = true;
};

/// A training step's run, as its report and summary show it.
struct StepFigures {
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;  ///< model TFLOPs over the GPU's peak
  /// Folded steps only (an unfolded one simulates no layers to split the ops by).
  std::optional<StepBreakdown> breakdown;
  MemoryPeak memory;
  /// A step validates its tokens_per_s_per_gpu or model_tflops_per_gpu.
  std::optional<ValidationFigures> validation;
};

/// The figures of case `c`, a training step, and `validation`'s row when there is one.
StepFigures step_figures(const work::CaseResult& c,
                         const std::optional<work::Validation>& validation);

/// Whether the step's schedule runs overlapped forward-backward pairs (DualPipe's).
bool pairs(const work::StepDetails& d);

/// "moe" or "dense": what the report calls a layer kind.
std::string_view layer_kind(bool moe);

/// A simulated layer's busiest GPU's compute over its communication; unset without any.
std::optional<double> compute_comm_ratio(const work::LayerTiming& layer);

/// Gigabytes of `bytes`, as the report shows memory.
double gb(double bytes);

}  // namespace hopsim::tools
