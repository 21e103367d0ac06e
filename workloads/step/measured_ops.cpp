// The folded step's ops as measured tasks (measured_ops.hpp).
#include "workloads/step/measured_ops.hpp"

#include <utility>

#include "workloads/step/expanded_ranks.hpp"

namespace hopsim::work::step_parts {

MeasuredOps::MeasuredOps(Plan& plan, const StageTimes& times, std::vector<topo::GpuId> gpus,
                         Bytes activation_bytes, Source source, const ScheduleRow& row,
                         ExpandedRanks* expanded)
    : times_(times),
      gpus_(std::move(gpus)),
      activation_bytes_(activation_bytes),
      source_(source),
      expanded_(expanded) {
  forward_phase_ = plan.phase(PhaseKind::Pipeline, PhasePass::Fwd);
  backward_phase_ = plan.phase(PhaseKind::Pipeline, PhasePass::Bwd);
  if (row.splits_backward) {
    weight_phase_ = plan.phase(PhaseKind::Pipeline, PhasePass::Weight);
  }
  if (row.pairs) {
    pair_phase_ = plan.phase(PhaseKind::Pipeline, PhasePass::Pair);
  }
  comm_forward_ = plan.phase(PhaseKind::PpComm, PhasePass::Fwd);
  comm_backward_ = plan.phase(PhaseKind::PpComm, PhasePass::Bwd);
}

std::vector<std::pair<PlanTaskId, PlanTaskId>> MeasuredOps::pieces(Plan& plan, topo::GpuId gpu,
                                                                   Time total, int count,
                                                                   std::uint32_t phase,
                                                                   std::string_view label) const {
  std::vector<std::pair<PlanTaskId, PlanTaskId>> out;
  const int n = std::max(1, count);
  const std::int64_t share = total.count_ps() / n;
  for (int k = 0; k < n; ++k) {  // equal pieces, the remainder on the last
    const Time d = Time::ps(k + 1 < n ? share : total.count_ps() - share * (n - 1));
    const PlanTaskId id =
        plan.add_compute(ComputeTask{gpu, d, Flops{}, source_, phase, kComputeStream, label});
    out.emplace_back(id, id);
  }
  return out;
}

OpTasks MeasuredOps::add_op(Plan& plan, int rank, const PipeOp& op) {
  const topo::GpuId gpu = gpus_[static_cast<std::size_t>(rank)];
  if (expanded_ != nullptr) {
    OpTasks built{expanded_->add_op(plan, rank, gpu, op)};
    if (!built.pieces.empty()) {
      return built;
    }
  }
  const StageTime& t = times_.at(rank, op.stage);
  const auto task = [&](Time d, std::uint32_t phase, std::string_view label) {
    const PlanTaskId id =
        plan.add_compute(ComputeTask{gpu, d, Flops{}, source_, phase, kComputeStream, label});
    return std::pair{id, id};
  };
  OpTasks out;
  switch (op.work) {
    case OpWork::Forward:
      out.pieces.push_back(task(t.forward, forward_phase_, "forward"));
      break;
    case OpWork::Backward:
      out.pieces = pieces(plan, gpu, t.backward, t.pieces, backward_phase_, "backward");
      break;
    case OpWork::BackwardInput:
      out.pieces.push_back(task(t.backward_input, backward_phase_, "backward input"));
      break;
    case OpWork::Weight:
      out.pieces = pieces(plan, gpu, t.weight, t.pieces, weight_phase_, "weight gradients");
      break;
    case OpWork::Pair:
      out.pieces.push_back(
          task(times_.pair(rank, op.stage, op.pair_stage), pair_phase_, "forward+backward"));
      break;
  }
  return out;
}

void MeasuredOps::cross(Plan& plan, int from, int to, PlanTaskId before, PlanTaskId after,
                        bool forward) {
  const topo::GpuId a = gpus_[static_cast<std::size_t>(from)];
  const topo::GpuId b = gpus_[static_cast<std::size_t>(to)];
  if (activation_bytes_.n == 0 || a == b) {
    plan.add_dependency(before, after);
    return;
  }
  const PlanTaskId flow =
      plan.add_flow(a, b, activation_bytes_, forward ? comm_forward_ : comm_backward_);
  plan.add_dependency(before, flow);
  plan.add_dependency(flow, after);
}

}  // namespace hopsim::work::step_parts
