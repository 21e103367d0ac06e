// The unfolded step's op source: each op the real transformer-layer subgraphs of its layers on
// every GPU of its stage (TP, CP and EP collectives included), copied from one built per shape;
// activations crossing as one flow per GPU (same TP, CP and DP coordinates). A backward's
// weight part is its layers' weight-gradient kernels, its input part the rest; a pair is the
// MoE layer's simulated pair where the folded step measures one, else its two halves one after
// the other; selective recomputation runs its modules' forward kernels before each layer's
// backward. Under ZeRO-3 every op runs layer by layer, each layer after its parameters' real
// all-gather (prefetched one layer ahead), and every backward reduce-scatters each layer's
// gradients.
#pragma once

#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "workloads/jobs/collective_job.hpp"
#include "workloads/step/piece.hpp"
#include "workloads/step/pipeline_layout.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work::step_parts {

/// What the unfolded step's ops and collectives share: one stage's mesh (the step's, pp 1),
/// each pipeline rank's GPUs in it, its DP groups, and the plan's join phase.
class UnfoldedStage {
 public:
  UnfoldedStage(const TrainingStepJob& job, const BuildEnv& b, Plan& plan);
  UnfoldedStage(const UnfoldedStage&) = delete;
  UnfoldedStage& operator=(const UnfoldedStage&) = delete;

  const TrainingStepJob& job() const { return job_; }

  const BuildEnv& build() const { return b_; }

  const BuildEnv& stage_build() const { return stage_build_; }

  const Mesh& stage_mesh() const { return stage_mesh_; }

  const StepShape& shape() const { return shape_; }

  /// Pipeline rank `rank`'s GPUs, in stage-mesh rank order.
  const std::vector<topo::GpuId>& gpus(int rank) const {
    return gpu_of_[static_cast<std::size_t>(rank)];
  }

  std::uint32_t join_phase() const { return join_phase_; }

  /// A zero-time task on rank `rank`'s first GPU after every one of `before`.
  PlanTaskId join(Plan& plan, int rank, std::span<const PlanTaskId> before) const;
  /// A collective `op` over the DP groups of the stages rank `rank` holds (spanning every rank
  /// that shares them): `dense` bytes over the dense parameters' groups, `expert` over the
  /// experts', after every one of `after`; returns its join.
  PlanTaskId collective(Plan& plan, int rank, CollectiveOp op, std::int64_t dense,
                        std::int64_t expert, std::uint32_t phase,
                        std::span<const PlanTaskId> after) const;

 private:
  const TrainingStepJob& job_;
  const BuildEnv& b_;
  StepShape shape_;
  Mesh stage_mesh_;
  JobEnv stage_env_;
  BuildEnv stage_build_;
  std::vector<std::vector<topo::GpuId>> gpu_of_;  // per pipeline rank, per stage-mesh rank
  std::vector<std::vector<std::vector<topo::GpuId>>> dense_groups_;   // per pipeline rank
  std::vector<std::vector<std::vector<topo::GpuId>>> expert_groups_;  // per pipeline rank
  std::uint32_t join_phase_ = 0;
};

/// A run of consecutive layers of one kind in one pass (or the output layer).
struct Segment {
  bool moe = false;
  bool forward = true;
  std::int64_t layers = 0;       ///< 0: the output layer
  std::int64_t last_index = -1;  ///< the model index of its layer, when it is one layer
  bool pair = false;             ///< a MoE layer's overlapped forward-backward pair
};

class UnfoldedOps final : public OpSource {
 public:
  /// Ops of `order` on `stage`'s GPUs; per (rank, stage) the last op computing its weight
  /// gradients runs layer by layer (its layers' gradient buckets start as each ends).
  UnfoldedOps(UnfoldedStage& stage, const StepDetails& details, const PipeOrder& order, Plan& plan);

  OpTasks add_op(Plan& plan, int rank, const PipeOp& op) override;
  void cross(Plan& plan, int from, int to, PlanTaskId before, PlanTaskId after,
             bool forward) override;

  /// ZeRO-3: rank `rank`'s last gradient reduce-scatter (its ops reduce their own).
  std::optional<PlanTaskId> reduced(int rank) const {
    return reduced_[static_cast<std::size_t>(rank)];
  }

 private:
  struct Prefetch;
  struct OpContext;

  std::vector<Segment> segments(int stage, bool forward, bool per_layer) const;
  std::vector<Segment> pair_segments(int forward_stage, int backward_stage) const;
  const Piece& piece(const Segment& seg, OpWork part);
  const Piece& recompute_piece(bool moe);
  PlanTaskId add(Plan& plan, const Segment& seg, OpWork part, int rank, PlanTaskId after);
  void add_segment(Plan& plan, OpContext& c, const Segment& seg);
  PlanTaskId start_unit(Plan& plan, int rank, const Segment& seg, bool forward, Prefetch& f,
                        PlanTaskId cur);
  void reduce_segment(Plan& plan, int rank, int stage, const Segment& seg, bool last,
                      PlanTaskId cur);
  void reduce_grads(Plan& plan, int rank, double dense, double expert, PlanTaskId cur);

  UnfoldedStage& stage_;
  const StepDetails& details_;
  int stages_;
  std::vector<std::vector<std::size_t>> last_weight_op_;  // per rank, per stage: its position
  std::vector<std::size_t> next_op_;                      // per rank
  std::vector<std::optional<PlanTaskId>> prev_;           // per rank: its last op's exit
  std::map<std::tuple<bool, bool, std::int64_t, OpWork, bool>, Piece> pieces_;
  std::optional<Piece> head_[2];
  std::optional<Piece> recompute_[2];
  std::vector<std::optional<PlanTaskId>> reduced_;  // ZeRO-3: per rank, its last reduce
  std::uint32_t comm_forward_ = 0;
  std::uint32_t comm_backward_ = 0;
  std::uint32_t sync_phase_ = 0;
  std::uint32_t gather_forward_ = 0;
  std::uint32_t gather_backward_ = 0;
};

}  // namespace hopsim::work::step_parts
