// What Megatron's EP overlap (schedules interleaved_ep_overlap, 1f1b_ep_overlap) hides in a MoE
// training step, simulated: the step under the interleaved schedule (or 1F1B at pp 1) without
// and with it, and the MoE layer's overlapped forward-backward pair against its forward +
// backward. `hopsim explain` prints it.
#pragma once

#include <optional>
#include <string>

#include "workloads/experiment/experiment.hpp"
#include "workloads/step/training_step_job.hpp"

namespace hopsim::tools {

struct EpOverlapFigures {
  std::string schedule_without;  ///< "interleaved" or "1f1b"
  std::string schedule_with;     ///< "interleaved_ep_overlap" or "1f1b_ep_overlap"
  double step_without_s = 0;     ///< under schedule_without
  double step_with_s = 0;        ///< under schedule_with
  /// The MoE layer under the overlap: its pair (one micro-batch's forward with another's
  /// backward) and its forward + backward alone; equal when the pair is not simulated.
  double moe_pair_s = 0;
  double moe_forward_backward_s = 0;
  bool pair_simulated = false;
  /// The EP exchanges the MoE layer's forward and backward leave exposed alone (what the pair
  /// can hide under the other micro-batch's compute), and what the pair hid of the layer's
  /// forward + backward.
  double ep_exposed_forward_s = 0;
  double ep_exposed_backward_s = 0;
  double moe_pair_hidden_s = 0;
  std::string note;  ///< what the overlap cannot hide here, or empty
};

/// For a MoE training step under "interleaved", "1f1b" or their EP-overlap schedules (nullopt
/// for any other step, or when either variant cannot run: its problems are the step's own).
std::optional<EpOverlapFigures> ep_overlap_figures(const work::Experiment& exp,
                                                   const work::TrainingStepJob& job);

}  // namespace hopsim::tools
