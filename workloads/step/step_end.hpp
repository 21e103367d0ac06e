// What follows a rank's pipeline, written once for every schedule and every op source: its
// gradient buckets, the optimizer and the parameter gather, and the step's fixed cost. What a
// DP collective becomes (a measured hold on the simulated GPU, or real collectives over the
// stage's DP groups) is the sync source's business.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "workloads/step/pipeline_layout.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work::step_parts {

/// How a step's data-parallel work becomes tasks.
class SyncSource {
 public:
  SyncSource() = default;
  SyncSource(const SyncSource&) = delete;
  SyncSource& operator=(const SyncSource&) = delete;
  virtual ~SyncSource() = default;

  /// Pipeline rank `rank`'s gradient bucket `key` of model stage `stage` (over the DP groups of
  /// the stages it holds, spanning every rank that holds them; each holder asks for the same
  /// buckets of a stage in the same order), after every task of `after`; its end, or none
  /// when it moves nothing.
  virtual std::optional<PlanTaskId> bucket(Plan& plan, int rank, int stage, const DpKey& key,
                                           std::span<const PlanTaskId> after) = 0;
  /// Another DP collective of rank `rank` (the gradient norm's all-reduce, the parameter
  /// gather) in phase (kind, pass), after every task of `after`; none when it takes no time
  /// (and then the phase is not added to the plan).
  virtual std::optional<PlanTaskId> collective(Plan& plan, int rank, const DpKey& key,
                                               PhaseKind kind, PhasePass pass,
                                               std::string_view label,
                                               std::span<const PlanTaskId> after) = 0;
  /// The measured time of rank `rank`'s collective `key` (0 where it runs as real traffic):
  /// what the report's optimizer parts and parameter gather show.
  virtual Time measured(int rank, const DpKey& key) const = 0;
  /// The GPUs that run rank `rank`'s optimizer, and the memory rate it runs at.
  virtual std::vector<topo::GpuId> gpus(int rank) const = 0;
  virtual double optimizer_bytes_per_s(int rank) const = 0;
};

/// Pipeline rank `rank`'s gradient buckets after its ops in `laid`, one at a time: per model
/// stage it holds, in the order its gradients complete there, after the last op that computes
/// its weight gradients (`every_op`, ZeRO-3 folded: after every such op) and after every other
/// rank holding the stage is done with them: the head's first (the last stage), then each
/// layer's as the piece that computed it ends (an op with one piece per layer: the last layer
/// first, the head's backward inside the first; else all after the op), the embedding's last
/// (the first stage). Returns the last.
std::optional<PlanTaskId> add_buckets(Plan& plan, SyncSource& sync, const TrainingStepJob& job,
                                      const StepShape& shape, const StepDetails& details,
                                      const LaidPipeline& laid, int rank, bool every_op);

/// The end of pipeline rank `rank`'s step on sync.gpus(rank), as added: the gradients' local
/// norms, their all-reduce, Adam, the parameter gather (none where it takes no time).
struct RankEnd {
  std::vector<PlanTaskId> norms;
  std::optional<PlanTaskId> reduced;
  std::vector<PlanTaskId> adams;
  std::optional<PlanTaskId> gathered;
};

/// The end of pipeline rank `rank`'s step on sync.gpus(rank): the gradients' local norm after
/// its last op and its last bucket, the norm's all-reduce, Adam, (ZeRO >= 1) the parameter
/// all-gather, then the framework's fixed cost; the optimizer's parts and the gather recorded
/// in `details` (the most any rank takes).
RankEnd add_rank_end(Plan& plan, SyncSource& sync, StepDetails& details, const TrainingStepJob& job,
                     const StepShape& shape, int rank, PlanTaskId last_op,
                     std::optional<PlanTaskId> last_bucket);

/// Where ranks share stages (DualPipe), their DP groups span them all: each rank's norm
/// all-reduce waits for every sharing rank's norms, its parameter gather for their Adam.
void share_rank_ends(Plan& plan, const StepShape& shape, const std::vector<RankEnd>& ends);

}  // namespace hopsim::work::step_parts
