// What a CP layer's report derives from its run: how even the ring's work is, the ring steps
// of one rank, and the attention phase's compute and the communication it left exposed.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tools/commands/validation_figures.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// One ring step of a rank: its attention compute, the block it sends on (none on the last
/// step), and how long its compute stream waited for the block it needed to arrive.
struct CpRingStep {
  double compute_s = 0;
  std::optional<double> transfer_s;
  double wait_s = 0;
};

/// The balance, the attention phase and the ring steps of a CP layer's run.
struct CpFigures {
  int min_work_units = 0;  ///< over the ring positions (0 when there are none)
  int max_work_units = 0;
  double work_units_max_over_min = 0;  ///< 0 when the fewest is 0
  double flops_max_over_min = 0;
  /// The critical rank's attention phases, every pass and layer together.
  double attention_compute_s = 0;
  double attention_exposed_comm_s = 0;
  double layer_time_s = 0;  ///< the step over its layers
  /// Of the rank CpDetails::steps_gpu names, in the first layer's forward pass.
  std::vector<CpRingStep> steps;
  /// Pass-Q: how long that rank's partial outputs took to come home after its last step (the
  /// all-to-all that follows the ring, exposed).
  std::optional<double> output_all_to_all_s;
  /// A layer validates its step time.
  std::optional<ValidationFigures> validation;
};

/// The largest over the smallest of `v` (0 when empty or the smallest is not positive).
double max_over_min(const std::vector<double>& v);

/// The figures of case `c`, a CP layer (`cp` its details) repeated `layers` times, and
/// `validation`'s row when there is one.
CpFigures cp_figures(const work::CaseResult& c, const work::CpDetails& cp, std::int64_t layers,
                     const std::optional<work::Validation>& validation);

}  // namespace hopsim::tools
