// Pipeline orders (1F1B, interleaved) and the plan that runs them.
#include "workloads/step/schedule.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/step/crossing.hpp"
#include "workloads/step/dualpipe.hpp"

namespace hopsim::work {
namespace {

// The k-th forward (or backward) of rank r under the interleaved schedule: micro-batches go in
// groups of p, each group through chunk 0, then chunk 1, ...; backward takes the chunks in
// reverse.
PipeOp interleaved_op(int k, int p, int v, bool forward) {
  const int group = k / (p * v);
  const int in_group = k % (p * v);
  const int chunk = in_group / p;
  return {group * p + in_group % p, forward ? chunk : v - 1 - chunk, forward};
}

// Per (model stage, micro-batch, forward): an op's first task (what waits for its input) and
// its last.
using OpTasks = std::map<std::tuple<int, int, bool>, std::pair<PlanTaskId, PlanTaskId>>;

// Stage `stage`'s own time in `times` (per model stage), or `all` when there are none.
Time per_stage(const std::vector<Time>& times, int stage, Time all) {
  return times.empty() ? all : times[static_cast<std::size_t>(stage)];
}

// One op's compute tasks on `gpu`, in order: a forward in one piece, a backward in its stage's
// equal pieces (the remainder on the last).
std::vector<PlanTaskId> add_op_tasks(Plan& plan, const PipelineSpec& spec, const PipeOp& op,
                                     int gpu, int stage, std::uint32_t phase) {
  const Time total = op.forward ? per_stage(spec.stage_forward, stage, spec.forward)
                                : per_stage(spec.stage_backward, stage, spec.backward);
  const int pieces = op.forward || spec.backward_pieces.empty()
                         ? 1
                         : std::max(1, spec.backward_pieces[static_cast<std::size_t>(stage)]);
  std::vector<PlanTaskId> ids;
  for (int k = 0; k < pieces; ++k) {  // equal pieces, the remainder on the last
    const std::int64_t share = total.count_ps() / pieces;
    const Time d = Time::ps(k + 1 < pieces ? share : total.count_ps() - share * (pieces - 1));
    ids.push_back(plan.add_compute(ComputeTask{gpu, d, Flops{}, spec.source, phase, kComputeStream,
                                               op.forward ? "forward" : "backward"}));
  }
  return ids;
}

// `before` on stage a, then (its data crossing to stage b's rank) `after`.
void cross_stages(Plan& plan, const PipelineSpec& spec, int a, int b, PlanTaskId before,
                  PlanTaskId after, std::uint32_t phase) {
  const int p = static_cast<int>(spec.gpus.size());
  add_crossing(plan, spec.gpus[static_cast<std::size_t>(a % p)],
               spec.gpus[static_cast<std::size_t>(b % p)], spec.activation_bytes, before, after,
               phase);
}

// Each micro-batch's data dependencies: its forward stage by stage, the last stage's backward
// after its forward, then its backward stage by stage down to the first.
void link_micro_batches(Plan& plan, const PipelineSpec& spec, const OpTasks& task_of,
                        std::uint32_t comm_fwd, std::uint32_t comm_bwd) {
  const int stages = static_cast<int>(spec.gpus.size()) * spec.chunks;
  const auto first = [&](int s, int mb, bool fwd) { return task_of.at({s, mb, fwd}).first; };
  const auto last = [&](int s, int mb, bool fwd) { return task_of.at({s, mb, fwd}).second; };
  for (int mb = 0; mb < spec.micro_batches; ++mb) {
    for (int s = 1; s < stages; ++s) {
      cross_stages(plan, spec, s - 1, s, last(s - 1, mb, true), first(s, mb, true), comm_fwd);
    }
    plan.add_dependency(last(stages - 1, mb, true), first(stages - 1, mb, false));
    for (int s = stages - 1; s > 0; --s) {
      cross_stages(plan, spec, s, s - 1, last(s, mb, false), first(s - 1, mb, false), comm_bwd);
    }
  }
}

}  // namespace

std::string_view pipe_schedule_name(PipeSchedule s) {
  switch (s) {
    case PipeSchedule::Interleaved:
      return "interleaved";
    case PipeSchedule::DualPipe:
      return "dualpipe";
    case PipeSchedule::OneFOneB:
      break;
  }
  return "1f1b";
}

Problems check_pipeline(PipeSchedule s, int stages, int micro_batches, int chunks,
                        const std::string& at) {
  Problems out;
  if (stages < 1 || micro_batches < 1 || chunks < 1) {
    out.push_back({at, fmt::format("a pipeline needs at least 1 stage, micro-batch and chunk; "
                                   "got {}, {}, {}",
                                   stages, micro_batches, chunks)});
    return out;
  }
  if (s == PipeSchedule::DualPipe) {
    if (chunks != 1) {
      out.push_back({at, fmt::format("dualpipe holds 2 stages per rank by itself, not {} chunks "
                                     "(virtual_stages 1)",
                                     chunks)});
      return out;
    }
    return check_dualpipe(stages, micro_batches, at);
  }
  if (s == PipeSchedule::OneFOneB && chunks != 1) {
    out.push_back({at, fmt::format("1f1b runs 1 chunk per rank, not {} (interleaved runs more)",
                                   chunks)});
  }
  if (s == PipeSchedule::Interleaved) {
    if (chunks < 2) {
      out.push_back({at, "interleaved needs at least 2 chunks (virtual stages) per rank"});
    } else if (micro_batches % stages != 0) {
      out.push_back({at, fmt::format("interleaved runs micro-batches in groups of the {} "
                                     "stages: {} micro-batches are not a multiple",
                                     stages, micro_batches)});
    }
  }
  return out;
}

std::vector<std::vector<PipeOp>> pipeline_order(PipeSchedule s, int p, int m, int v) {
  HOPSIM_ASSERT(s != PipeSchedule::DualPipe && check_pipeline(s, p, m, v, "").empty(),
                "pipeline {} x {} x {}", p, m, v);
  std::vector<std::vector<PipeOp>> order(static_cast<std::size_t>(p));
  const int total = m * v;  // forwards (and backwards) per rank
  for (int r = 0; r < p; ++r) {
    std::vector<PipeOp>& ops = order[static_cast<std::size_t>(r)];
    // Warm-up forwards before the first backward: 1F1B p - r - 1; interleaved (Megatron)
    // 2 (p - r - 1) + (v - 1) p.
    const int warmup = std::min(
        total, s == PipeSchedule::OneFOneB ? p - r - 1 : 2 * (p - r - 1) + (v - 1) * p);
    const auto fwd = [&](int k) {
      return s == PipeSchedule::OneFOneB ? PipeOp{k, 0, true} : interleaved_op(k, p, v, true);
    };
    const auto bwd = [&](int k) {
      return s == PipeSchedule::OneFOneB ? PipeOp{k, 0, false} : interleaved_op(k, p, v, false);
    };
    int f = 0;
    int b = 0;
    for (; f < warmup; ++f) {
      ops.push_back(fwd(f));
    }
    for (; f < total; ++f, ++b) {  // steady state: one forward, one backward
      ops.push_back(fwd(f));
      ops.push_back(bwd(b));
    }
    for (; b < total; ++b) {
      ops.push_back(bwd(b));
    }
  }
  return order;
}

PipelineTasks add_pipeline(Plan& plan, const PipelineSpec& spec) {
  const int p = static_cast<int>(spec.gpus.size());
  const int v = spec.chunks;
  const std::vector<std::vector<PipeOp>> order =
      pipeline_order(spec.schedule, p, spec.micro_batches, v);
  const std::uint32_t fwd_phase = plan.phase(PhaseKind::Pipeline, PhasePass::Fwd);
  const std::uint32_t bwd_phase = plan.phase(PhaseKind::Pipeline, PhasePass::Bwd);
  const std::uint32_t comm_phase = plan.phase(PhaseKind::PpComm, PhasePass::Fwd);
  const std::uint32_t comm_bwd_phase = plan.phase(PhaseKind::PpComm, PhasePass::Bwd);
  // Tasks first (a rank's order fixes its stream), dependencies after, by (model stage,
  // micro-batch, direction): the op's first task (what waits for its input) and its last.
  PipelineTasks out;
  out.ops.resize(static_cast<std::size_t>(p));
  out.last_backward.resize(static_cast<std::size_t>(p));
  out.backwards.resize(static_cast<std::size_t>(p));
  OpTasks task_of;
  for (int r = 0; r < p; ++r) {
    const int gpu = spec.gpus[static_cast<std::size_t>(r)];
    out.last_backward[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(v));
    for (const PipeOp& op : order[static_cast<std::size_t>(r)]) {
      const int stage = op.chunk * p + r;
      const std::vector<PlanTaskId> ids =
          add_op_tasks(plan, spec, op, gpu, stage, op.forward ? fwd_phase : bwd_phase);
      out.ops[static_cast<std::size_t>(r)].push_back(ids.back());
      task_of[{stage, op.micro_batch, op.forward}] = {ids.front(), ids.back()};
      if (!op.forward) {  // the rank's backwards of a chunk come in micro-batch order
        out.last_backward[static_cast<std::size_t>(r)][static_cast<std::size_t>(op.chunk)] = ids;
        out.backwards[static_cast<std::size_t>(r)].push_back({op.chunk, ids});
      }
    }
  }
  link_micro_batches(plan, spec, task_of, comm_phase, comm_bwd_phase);
  return out;
}

}  // namespace hopsim::work
