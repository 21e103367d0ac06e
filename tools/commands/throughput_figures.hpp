// What a step or layer run is worth per GPU: tokens per second, model TFLOPs and MFU. Sweeps
// rank their points by these, since a lower step time on fewer sequences is not a better point.
#pragma once

#include <cstdint>
#include <optional>

#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

struct ThroughputFigures {
  std::int64_t gpus = 0;
  double tokens = 0;  ///< per step (a layer kind: through its layers, as they pass)
  double tokens_per_s_per_gpu = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;  ///< model TFLOPs over one GPU's peak dense BF16
};

/// The figures of case `c`; unset for kinds without tokens (collectives, flows) or a case
/// that took no time.
std::optional<ThroughputFigures> throughput_figures(const work::CaseResult& c);

}  // namespace hopsim::tools
