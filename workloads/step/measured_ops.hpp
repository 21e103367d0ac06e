// The folded step's op source: each op one compute task of its stage's measured time on the
// rank's simulated GPU (a whole backward and a weight part in its layers' equal pieces, so that
// a layer's gradient bucket starts as its piece ends), activations crossing as one flow; a pipeline
// rank that partial folding expands runs its layer group's real layers instead
// (expanded_ranks.hpp).
#pragma once

#include <vector>

#include "workloads/step/pipeline_layout.hpp"
#include "workloads/step/stage_times.hpp"

namespace hopsim::work::step_parts {

class ExpandedRanks;

class MeasuredOps final : public OpSource {
 public:
  /// Ops of pipeline rank r on gpus[r] at `times`, their compute source `source`, in the
  /// phases `row`'s ops need; `expanded` (may be null) builds the ops of the ranks it expands.
  MeasuredOps(Plan& plan, const StageTimes& times, std::vector<topo::GpuId> gpus,
              Bytes activation_bytes, Source source, const ScheduleRow& row,
              ExpandedRanks* expanded);

  OpTasks add_op(Plan& plan, int rank, const PipeOp& op) override;
  void cross(Plan& plan, int from, int to, PlanTaskId before, PlanTaskId after,
             bool forward) override;

 private:
  // `total` in `count` equal pieces (the remainder on the last), one after the other.
  std::vector<std::pair<PlanTaskId, PlanTaskId>> pieces(Plan& plan, topo::GpuId gpu, Time total,
                                                        int count, std::uint32_t phase,
                                                        std::string_view label) const;

  const StageTimes& times_;
  std::vector<topo::GpuId> gpus_;
  Bytes activation_bytes_;
  Source source_;
  ExpandedRanks* expanded_;
  std::uint32_t forward_phase_ = 0;
  std::uint32_t backward_phase_ = 0;
  std::uint32_t weight_phase_ = 0;
  std::uint32_t pair_phase_ = 0;
  std::uint32_t comm_forward_ = 0;
  std::uint32_t comm_backward_ = 0;
};

}  // namespace hopsim::work::step_parts
