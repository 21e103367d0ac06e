// One routine lays any schedule's order into a plan. What an op becomes is its op source's
// business: the folded step's measured tasks, a perturbed rank's real layers (partial
// folding), or the unfolded step's layer subgraphs on every GPU of a stage. The layout adds the
// ops rank by rank and then every micro-batch's data dependencies across stages, the same way
// for every schedule and every source.
#pragma once

#include <utility>
#include <vector>

#include "workloads/plan/plan.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::work {

/// An op in a plan: per piece (a backward in its layers, so that a layer's gradient bucket can
/// start as its piece ends; most ops are one piece), its first task (what waits for the op's
/// input) and its last.
struct OpTasks {
  std::vector<std::pair<PlanTaskId, PlanTaskId>> pieces;

  PlanTaskId first() const { return pieces.front().first; }

  PlanTaskId last() const { return pieces.back().second; }
};

/// What ops become.
class OpSource {
 public:
  OpSource() = default;
  OpSource(const OpSource&) = delete;
  OpSource& operator=(const OpSource&) = delete;
  virtual ~OpSource() = default;

  /// Adds `op` of pipeline rank `rank` to `plan`, after the rank's ops added before it.
  virtual OpTasks add_op(Plan& plan, int rank, const PipeOp& op) = 0;

  /// `after` (an op on rank `to`) waits for `before` (an op on rank `from`) and for the data
  /// it hands over to cross: a micro-batch's activations (`forward`) or their gradients.
  virtual void cross(Plan& plan, int from, int to, PlanTaskId before, PlanTaskId after,
                     bool forward) = 0;
};

/// One op as laid: what it does and its tasks.
struct LaidOp {
  PipeOp op;
  OpTasks tasks;
};

/// Per rank, its ops in its order.
using LaidPipeline = std::vector<std::vector<LaidOp>>;

/// Lays `order` (of `stages` model stages and `micro_batches` micro-batches) into `plan`:
/// each rank's ops in order through `source`, then per micro-batch its forward stage by stage,
/// the last stage's backward after its own forward, and its backward stage by stage down to
/// the first (each crossing between two ranks through source.cross; one op that holds both
/// ends, a pair, needs none). A weight part follows its input part on its rank by order.
LaidPipeline lay_pipeline(Plan& plan, const PipeOrder& order, int stages, int micro_batches,
                          OpSource& source);

}  // namespace hopsim::work
