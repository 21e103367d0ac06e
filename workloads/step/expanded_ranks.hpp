// Partial folding under link perturbations: the pipeline ranks whose simulated GPU sits in a
// layer group a perturbed link touches run, in the folded plan, as that group's real layers
// and their stage's real gradient collectives (docs/what-ifs.md#a-perturbed-step-folded).
//
// Measured apart, a touched group's layers and its stage's DP syncs each see the perturbed
// links alone; unfolded, they share them with each other and with the pipeline's activations
// (a failed NVLink's TP all-reduces go through the NIC that also carries the gradient
// buckets). Run as real traffic in the one plan, they share them as unfolded.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "workloads/step/partial_fold.hpp"
#include "workloads/step/piece.hpp"
#include "workloads/step/pipe_op.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work::step_parts {

class ExpandedRanks {
 public:
  /// The ranks of `details`' representatives to expand: the representative lies in a layer
  /// group that a link perturbation touches, that group sets the rank's pace for every layer
  /// kind, the schedule's ops are plain forwards and backwards, and the step is neither ZeRO-3
  /// nor offloaded (their waits stay measured).
  ExpandedRanks(const TrainingStepJob& job, const BuildEnv& b, const StepDetails& details,
                const StepMeasurements& m);

  bool any() const { return !ranks_.empty(); }

  /// Whether pipeline rank `rank` of the column whose GPU there is `gpu` runs as the expanded
  /// group: the rank is expanded and `gpu` one of its group's (under spine perturbations
  /// further columns may sit in the group, and share its ops).
  bool runs(int rank, topo::GpuId gpu) const;

  /// Rank `rank`'s `op` (a forward or a whole backward) as its layer group's layers (full
  /// recomputation's forward again, selective recomputation's kernels, the output layer on
  /// the last stage), after the rank's previous op: per piece (a forward is one, a backward
  /// one per layer, the output layer with the first), its first and last task. Empty unless
  /// runs(rank, gpu); the op's tasks, not new ones, when another column added it already.
  std::vector<std::pair<PlanTaskId, PlanTaskId>> add_op(Plan& plan, int rank, topo::GpuId gpu,
                                                        const PipeOp& op);

  /// A gradient bucket of expanded rank `rank`: collective `key` over its stage's DP groups,
  /// after every task of `after` (its piece, the bucket before it); returns its end.
  PlanTaskId add_bucket(Plan& plan, int rank, const DpKey& key, std::span<const PlanTaskId> after);

  /// The last bucket added for `rank` (another column's rank in the group waits for it).
  std::optional<PlanTaskId> last_bucket(int rank) const { return ranks_.at(rank).last_bucket; }

  /// Each op added, on its rank's GPU.
  const std::vector<OpSpan>& spans() const { return spans_; }

 private:
  struct Rank {
    std::vector<topo::GpuId> gpus;                 ///< the layer group's, in layer-group rank order
    topo::GpuId gpu;                               ///< the rank's representative, one of them
    std::array<std::optional<Piece>, 2> forward;   ///< dense, MoE
    std::array<std::optional<Piece>, 2> backward;  ///< dense, MoE
    std::array<std::optional<Piece>, 2> recompute;  ///< selective recomputation's kernels
    std::optional<Piece> head_forward;
    std::optional<Piece> head_backward;
    std::optional<PlanTaskId> last;  ///< its last op's end so far
    std::optional<PlanTaskId> last_bucket;
    /// Per (model stage, micro-batch, forward): the op's pieces, as added.
    std::map<std::tuple<int, int, bool>, std::vector<std::pair<PlanTaskId, PlanTaskId>>> ops;
  };

  void expand(int rank, const TouchedGroup& g, const StepMeasurements& view);
  const Piece& bucket_piece(int rank, const DpKey& key);

  const TrainingStepJob& job_;
  const BuildEnv& b_;
  const StepDetails& details_;
  std::map<int, Rank> ranks_;
  std::map<std::pair<int, DpKey>, Piece> buckets_;
  std::vector<topo::GpuId> every_gpu_;  ///< GPU g as itself: DP plans are built in place
  std::vector<OpSpan> spans_;
};

}  // namespace hopsim::work::step_parts
