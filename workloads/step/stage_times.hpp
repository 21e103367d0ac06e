// The folded step's op times: each model stage's forward, backward (whole, its input part, its
// weight part) and overlapped pairs, from the measured layers, as each pipeline rank holding
// the stage runs them (its own measurements where perturbations touch it).
#pragma once

#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work::step_parts {

/// One model stage's ops on one pipeline rank.
struct StageTime {
  Time forward;         ///< its layers' forwards, the output layer's on the last stage
  Time backward;        ///< whole: its layers' (recomputation as the step does it), the head's
  Time weight;          ///< the backward's weight-gradient part (its layers' weight GEMMs)
  Time backward_input;  ///< backward less weight
  int pieces = 1;       ///< a whole backward or a weight part runs as this many pieces (its layers)
  /// ZeRO-3: what one forward and one backward of the stage waited for parameter gathers
  Time gathers_waited;
};

/// One layer kind's gradient sync per rank view (the ZeRO-3 gather beside it).
struct Syncs {
  std::optional<GradSync> dense;
  std::optional<GradSync> moe;
};

Syncs syncs_of(const TrainingStepJob& job, const BuildEnv& b, const StepMeasurements& m);

class StageTimes {
 public:
  /// Every rank's stages, rank r seen as views[r] (under ZeRO-3 each layer after its
  /// prefetched gather, param_prefetch.hpp; with activation offload the copies' waits from
  /// `details`); pairs only where the schedule runs them.
  StageTimes(const TrainingStepJob& job, const StepShape& shape, const StepDetails& details,
             const std::vector<StepMeasurements>& views, const std::vector<Syncs>& syncs);

  const StageTime& at(int rank, int stage) const { return stages_.at({rank, stage}); }

  /// Rank `rank`'s pair of stage `forward`'s forward beside stage `backward`'s backward: their
  /// layers side by side, each MoE-with-MoE pair as simulated overlapped, a dense layer beside
  /// a MoE layer as mixed_pair, a layer without a partner alone, the head's passes added.
  Time pair(int rank, int forward, int backward) const {
    return pairs_.at({rank, forward, backward});
  }

  /// Every (rank, stage)'s ops, and every pair of two stages of one rank.
  const std::map<std::pair<int, int>, StageTime>& stages() const { return stages_; }

  const std::map<std::tuple<int, int, int>, Time>& pairs() const { return pairs_; }

 private:
  std::map<std::pair<int, int>, StageTime> stages_;
  std::map<std::tuple<int, int, int>, Time> pairs_;
};

/// The share of the step the schedule's closed form gives its bubble (schedule_table.hpp),
/// with the mean of the stages' measured op times (a pair: the mean of the pairs it runs);
/// none where the schedule has no closed form.
std::optional<double> closed_form_bubble(const TrainingStepJob& job, const StepShape& shape,
                                         const StageTimes& times);

}  // namespace hopsim::work::step_parts
