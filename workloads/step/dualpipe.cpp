// DualPipe's order and the plan that runs it.
#include "workloads/step/dualpipe.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/step/crossing.hpp"

namespace hopsim::work {
namespace {

// One rank's order, step by step as DeepSeek's schedule builds it. A rank's "chunk 0" is the
// stage nearer the model's start (direction 0 on the first half of the ranks, 1 on the
// second), "chunk 1" the other.
class RankOrder {
 public:
  RankOrder(int p, int m, int rank) : p_(p), half_chunks_(m / 2), rank_(rank) {
    second_half_ = rank >= p / 2;
  }

  std::vector<DualOp> build() {
    const int half_rank = std::min(rank_, p_ - 1 - rank_);
    const int half_ranks = p_ / 2;
    const bool middle = rank_ == half_ranks - 1 || rank_ == half_ranks;
    for (int i = 0; i < (half_ranks - half_rank - 1) * 2; ++i) {  // 1: nF0
      forward(0);
    }
    for (int i = 0; i < half_rank + 1; ++i) {  // 2: nF0F1
      forward(0);
      forward(1);
    }
    for (int i = 0; i < half_ranks - half_rank - 1; ++i) {  // 3: nB1W1F1 (zero bubble)
      backward(1, true);
      weight();
      forward(1);
    }
    const int main_steps = half_chunks_ - p_ + half_rank + 1;
    for (int i = 0; i < main_steps; ++i) {  // 4: nF0B1F1B0
      if (i == 0 && middle) {  // not overlapped, to shrink the bubble
        forward(0);
        backward(1, false);
      } else {
        pair(0, 1);
      }
      pair(1, 0);
    }
    for (int i = 0; i < half_ranks - half_rank - 1; ++i) {  // 5: nB1F1B0
      backward(1, false);
      pair(1, 0);
    }
    bool zero_bubble = false;  // 6: nB1B0, the second half with zero bubble
    const int steps6 = half_rank + 1;
    for (int i = 0; i < steps6; ++i) {
      if (i == steps6 / 2 && half_rank % 2 == 1) {
        zero_bubble = true;
      }
      backward(1, zero_bubble);
      if (i == steps6 / 2 && half_rank % 2 == 0) {
        zero_bubble = true;
      }
      backward(0, zero_bubble);
    }
    for (int i = 0; i < half_ranks - half_rank - 1; ++i) {  // 7: nWB0 (zero bubble)
      weight();
      backward(0, true);
    }
    for (int i = 0; i < half_rank + 1; ++i) {  // 8: nW
      weight();
    }
    HOPSIM_ASSERT(deferred_.empty(), "rank {}: {} weight parts left", rank_, deferred_.size());
    return std::move(ops_);
  }

 private:
  int p_;
  int half_chunks_;
  int rank_;
  bool second_half_ = false;
  int next_f_[2] = {0, 0};  // by direction
  int next_b_[2] = {0, 0};
  std::deque<std::pair<int, int>> deferred_;  // weight parts: (direction, micro-batch)
  std::vector<DualOp> ops_;

  int direction(int chunk) const { return chunk ^ (second_half_ ? 1 : 0); }

  void forward(int chunk) {
    const int d = direction(chunk);
    ops_.push_back({DualWork::Forward, d, next_f_[d]++, 0, 0});
  }
  void backward(int chunk, bool zero_bubble) {
    const int d = direction(chunk);
    const int mb = next_b_[d]++;
    ops_.push_back({zero_bubble ? DualWork::BackwardInput : DualWork::Backward, d, mb, 0, 0});
    if (zero_bubble) {
      deferred_.emplace_back(d, mb);
    }
  }
  void weight() {
    HOPSIM_ASSERT(!deferred_.empty(), "rank {}: a weight part with none deferred", rank_);
    const auto [d, mb] = deferred_.front();
    deferred_.pop_front();
    ops_.push_back({DualWork::Weight, d, mb, 0, 0});
  }
  void pair(int forward_chunk, int backward_chunk) {
    const int fd = direction(forward_chunk);
    const int bd = direction(backward_chunk);
    ops_.push_back({DualWork::Pair, fd, next_f_[fd]++, bd, next_b_[bd]++});
  }
};

// The phases of DualPipe's tasks, added to a plan in this order.
struct DualPhases {
  std::uint32_t fwd = 0;
  std::uint32_t bwd = 0;
  std::uint32_t weight = 0;
  std::uint32_t pair = 0;
  std::uint32_t comm_fwd = 0;
  std::uint32_t comm_bwd = 0;
};

// DualPipe's phases, asked of `plan` in the order above.
DualPhases dualpipe_phases(Plan& plan) {
  DualPhases out;
  out.fwd = plan.phase(PhaseKind::Pipeline, PhasePass::Fwd);
  out.bwd = plan.phase(PhaseKind::Pipeline, PhasePass::Bwd);
  out.weight = plan.phase(PhaseKind::Pipeline, PhasePass::Weight);
  out.pair = plan.phase(PhaseKind::Pipeline, PhasePass::Pair);
  out.comm_fwd = plan.phase(PhaseKind::PpComm, PhasePass::Fwd);
  out.comm_bwd = plan.phase(PhaseKind::PpComm, PhasePass::Bwd);
  return out;
}

// The task that finishes (direction, micro-batch, forward?, stage): the data each next stage
// waits for.
using DoneTasks = std::map<std::tuple<int, int, bool, int>, PlanTaskId>;

// Rank r's op `op` on stage `stage`: its time and its phase.
std::pair<Time, std::uint32_t> op_time(const DualPipeSpec& spec, const DualPhases& phases, int r,
                                       const DualOp& op, int stage) {
  const int p = static_cast<int>(spec.gpus.size());
  const auto at = [](const std::vector<Time>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  const auto own = spec.rank_times.find(r);
  const DualStageTimes& times = own == spec.rank_times.end() ? spec : own->second;
  Time t;
  std::uint32_t phase = phases.fwd;
  switch (op.work) {
    case DualWork::Forward:
      t = at(times.forward, stage);
      break;
    case DualWork::Backward:
      t = at(times.backward, stage);
      phase = phases.bwd;
      break;
    case DualWork::BackwardInput:
      t = at(times.backward_input, stage);
      phase = phases.bwd;
      break;
    case DualWork::Weight:
      t = at(times.weight, stage);
      phase = phases.weight;
      break;
    case DualWork::Pair:
      t = at(times.pair, stage * p + dualpipe_stage(p, r, op.pair_direction));
      phase = phases.pair;
      break;
  }
  return {t, phase};
}

// Records rank r's task `id` for `op`: in `done`, the forward and backward it finishes; in
// `grads_done` (the rank's, per direction), that it completes a direction's gradients.
void record_op(int p, int r, const DualOp& op, int stage, PlanTaskId id, DoneTasks& done,
               std::vector<PlanTaskId>& grads_done) {
  if (op.work == DualWork::Pair) {
    done[{op.direction, op.micro_batch, true, stage}] = id;
    const int bstage = dualpipe_stage(p, r, op.pair_direction);
    done[{op.pair_direction, op.pair_micro_batch, false, bstage}] = id;
    grads_done[static_cast<std::size_t>(op.pair_direction)] = id;
  } else if (op.work == DualWork::Weight) {
    grads_done[static_cast<std::size_t>(op.direction)] = id;
  } else {
    const bool fwd = op.work == DualWork::Forward;
    done[{op.direction, op.micro_batch, fwd, stage}] = id;
    if (op.work == DualWork::Backward) {
      grads_done[static_cast<std::size_t>(op.direction)] = id;
    }
  }
}

// `before` on `from_stage`'s rank for direction d, then (its data crossing) `after` on
// `to_stage`'s; nothing when they are one task.
void cross_stages(Plan& plan, const DualPipeSpec& spec, int d, int from_stage, int to_stage,
                  PlanTaskId before, PlanTaskId after, std::uint32_t phase) {
  const int p = static_cast<int>(spec.gpus.size());
  // A stage's rank for direction d.
  const auto rank_of = [&](int stage) { return d == 0 ? stage : p - 1 - stage; };
  if (before == after) {
    return;
  }
  add_crossing(plan, spec.gpus[static_cast<std::size_t>(rank_of(from_stage))],
               spec.gpus[static_cast<std::size_t>(rank_of(to_stage))], spec.activation_bytes,
               before, after, phase);
}

// Data dependencies along each direction: every micro-batch's forward stage by stage, the last
// stage's backward after its forward, then its backward stage by stage down to the first.
void link_directions(Plan& plan, const DualPipeSpec& spec, const DualPhases& phases,
                     const DoneTasks& done) {
  const int p = static_cast<int>(spec.gpus.size());
  for (int d = 0; d < 2; ++d) {
    for (int mb = 0; mb < spec.micro_batches / 2; ++mb) {
      for (int s = 1; s < p; ++s) {
        cross_stages(plan, spec, d, s - 1, s, done.at({d, mb, true, s - 1}),
                     done.at({d, mb, true, s}), phases.comm_fwd);
      }
      const PlanTaskId last_f = done.at({d, mb, true, p - 1});
      const PlanTaskId last_b = done.at({d, mb, false, p - 1});
      if (last_f != last_b) {
        plan.add_dependency(last_f, last_b);
      }
      for (int s = p - 1; s > 0; --s) {
        cross_stages(plan, spec, d, s, s - 1, done.at({d, mb, false, s}),
                     done.at({d, mb, false, s - 1}), phases.comm_bwd);
      }
    }
  }
}

}  // namespace

Problems check_dualpipe(int stages, int micro_batches, const std::string& at) {
  Problems out;
  if (stages < 2 || stages % 2 != 0) {
    out.push_back({at, fmt::format("dualpipe runs an even number of pipeline ranks, at least "
                                   "2; got pp {}",
                                   stages)});
  } else if (micro_batches % 2 != 0 || micro_batches < 2 * stages) {
    out.push_back({at, fmt::format("dualpipe feeds micro-batches from both ends: an even number, "
                                   "at least 2 x pp = {}; got {}",
                                   2 * stages, micro_batches)});
  }
  return out;
}

std::vector<std::vector<DualOp>> dualpipe_order(int p, int m) {
  HOPSIM_ASSERT(check_dualpipe(p, m, "").empty(), "dualpipe {} x {}", p, m);
  std::vector<std::vector<DualOp>> out;
  for (int r = 0; r < p; ++r) {
    out.push_back(RankOrder(p, m, r).build());
  }
  return out;
}

DualPipeTasks add_dualpipe(Plan& plan, const DualPipeSpec& spec) {
  const int p = static_cast<int>(spec.gpus.size());
  const std::vector<std::vector<DualOp>> order = dualpipe_order(p, spec.micro_batches);
  const DualPhases phases = dualpipe_phases(plan);
  DoneTasks done;
  DualPipeTasks out;
  out.ops.resize(static_cast<std::size_t>(p));
  out.grads_done.assign(static_cast<std::size_t>(p), std::vector<PlanTaskId>(2, 0));
  for (int r = 0; r < p; ++r) {
    const topo::GpuId gpu = spec.gpus[static_cast<std::size_t>(r)];
    for (const DualOp& op : order[static_cast<std::size_t>(r)]) {
      const int stage = dualpipe_stage(p, r, op.direction);
      const auto [t, phase] = op_time(spec, phases, r, op, stage);
      const PlanTaskId id = plan.add_compute(ComputeTask{
          gpu, t, Flops{}, spec.source, phase, kComputeStream,
          op.work == DualWork::Pair ? "forward+backward" : "dualpipe"});
      out.ops[static_cast<std::size_t>(r)].push_back(id);
      record_op(p, r, op, stage, id, done, out.grads_done[static_cast<std::size_t>(r)]);
    }
  }
  link_directions(plan, spec, phases, done);
  return out;
}

}  // namespace hopsim::work
