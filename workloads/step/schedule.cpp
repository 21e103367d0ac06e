// Pipeline orders (1F1B, interleaved) and the plan that runs them.
#include "workloads/step/schedule.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/step/crossing.hpp"
#include "workloads/step/dualpipe.hpp"

namespace hopsim::work {
namespace {

// Every forward (or backward) of a rank under the interleaved schedule, in order: micro-batches
// in groups of `group` (the last group what is left), each group through chunk 0, then chunk
// 1, ...; backward takes the chunks in reverse.
std::vector<PipeOp> interleaved_ops(int m, int v, int group, bool forward) {
  std::vector<PipeOp> out;
  out.reserve(static_cast<std::size_t>(m) * static_cast<std::size_t>(v));
  for (int start = 0; start < m; start += group) {
    const int size = std::min(group, m - start);
    for (int c = 0; c < v; ++c) {
      for (int i = 0; i < size; ++i) {
        out.push_back({start + i, forward ? c : v - 1 - c, forward});
      }
    }
  }
  return out;
}

// The micro-batch group an interleaved order uses: `group`, 0 meaning p, at most m.
int group_size(int p, int m, int group) { return std::min(m, group == 0 ? p : group); }

// Rank r's ops: `warmup` forwards, then one forward one backward, then the last backwards.
std::vector<PipeOp> rank_order(const std::vector<PipeOp>& fwd, const std::vector<PipeOp>& bwd,
                               int warmup) {
  const int total = static_cast<int>(fwd.size());
  std::vector<PipeOp> ops;
  ops.reserve(2 * fwd.size());
  int f = 0;
  int b = 0;
  for (; f < warmup; ++f) {
    ops.push_back(fwd[static_cast<std::size_t>(f)]);
  }
  for (; f < total; ++f, ++b) {  // steady state: one forward, one backward
    ops.push_back(fwd[static_cast<std::size_t>(f)]);
    ops.push_back(bwd[static_cast<std::size_t>(b)]);
  }
  for (; b < total; ++b) {
    ops.push_back(bwd[static_cast<std::size_t>(b)]);
  }
  return ops;
}

// Runs `order` on dependencies alone (a forward after the previous stage's forward of its
// micro-batch, a backward after the next stage's backward, the last stage's after its own
// forward), each rank taking its ops in order: per rank, how many of its ops ran (all of them
// when the order finishes).
std::vector<std::size_t> dry_run(const std::vector<std::vector<PipeOp>>& order, int m, int v) {
  const int p = static_cast<int>(order.size());
  const int stages = p * v;
  // done[(stage * m + mb) * 2 + forward]
  std::vector<char> done(static_cast<std::size_t>(stages) * static_cast<std::size_t>(m) * 2, 0);
  const auto at = [&](int stage, int mb, bool fwd) -> char& {
    return done[(static_cast<std::size_t>(stage) * static_cast<std::size_t>(m) +
                 static_cast<std::size_t>(mb)) *
                    2 +
                (fwd ? 1 : 0)];
  };
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const std::vector<PipeOp>& ops = order[static_cast<std::size_t>(r)];
      std::size_t& k = next[static_cast<std::size_t>(r)];
      for (; k < ops.size(); ++k) {
        const PipeOp& op = ops[k];
        const int stage = op.chunk * p + r;
        const bool ready = op.forward ? (stage == 0 || at(stage - 1, op.micro_batch, true))
                                      : (stage == stages - 1 ? at(stage, op.micro_batch, true)
                                                             : at(stage + 1, op.micro_batch,
                                                                  false));
        if (!ready) {
          break;
        }
        at(stage, op.micro_batch, op.forward) = 1;
        progress = true;
      }
    }
  }
  return next;
}

// The first rank whose order does not finish under dry_run, and the op it waits on.
std::optional<std::pair<int, PipeOp>> stalled_op(const std::vector<std::vector<PipeOp>>& order,
                                                  int m, int v) {
  const std::vector<std::size_t> ran = dry_run(order, m, v);
  for (std::size_t r = 0; r < order.size(); ++r) {
    if (ran[r] < order[r].size()) {
      return std::pair{static_cast<int>(r), order[r][ran[r]]};
    }
  }
  return std::nullopt;
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
                                     topo::GpuId gpu, int stage, std::uint32_t phase) {
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

// The orders of a shape (unchecked). Warm-up forwards before the first backward: 1F1B
// p - r - 1; interleaved Megatron's 2 (p - r - 1) + (v - 1) N with N the group, and at most
// (v + 1) N: with N < p the first rank's forward k of a later chunk needs the last rank's
// forward k - N, and the last rank (warm-up (v - 1) N, then one forward per backward) runs its
// first v N + 1 forwards on backwards of its own last chunk only, so a longer warm-up would
// wait on a backward that waits on it. Megatron's N = p never reaches the cap.
std::vector<std::vector<PipeOp>> build_order(PipeSchedule s, int p, int m, int v, int group) {
  const int total = m * v;  // forwards (and backwards) per rank
  const int n = group_size(p, m, group);
  std::vector<PipeOp> fwd;
  std::vector<PipeOp> bwd;
  if (s == PipeSchedule::OneFOneB) {
    for (int k = 0; k < m; ++k) {
      fwd.push_back({k, 0, true});
      bwd.push_back({k, 0, false});
    }
  } else {
    fwd = interleaved_ops(m, v, n, true);
    bwd = interleaved_ops(m, v, n, false);
  }
  std::vector<std::vector<PipeOp>> order(static_cast<std::size_t>(p));
  std::vector<int> warmup(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    const int w = s == PipeSchedule::OneFOneB
                      ? p - r - 1
                      : std::min(2 * (p - r - 1) + (v - 1) * n, (v + 1) * n);
    warmup[static_cast<std::size_t>(r)] = std::min(total, w);
    order[static_cast<std::size_t>(r)] = rank_order(fwd, bwd, warmup[static_cast<std::size_t>(r)]);
  }
  if (s == PipeSchedule::OneFOneB || (n >= p && m % n == 0)) {
    return order;  // Megatron's orders (whole groups of p or more) run to the end
  }
  // A last group smaller than N shifts the indices the cap counts on: while the order stalls,
  // the longest warm-up (the first rank's) takes one forward fewer and no rank keeps a longer
  // one, down to the (v - 1) N forwards a first backward needs.
  while (warmup[0] > (v - 1) * n) {
    const std::vector<std::size_t> ran = dry_run(order, m, v);
    bool finished = true;
    for (std::size_t r = 0; r < order.size(); ++r) {
      finished = finished && ran[r] == order[r].size();
    }
    if (finished) {
      break;
    }
    --warmup[0];
    for (std::size_t r = 0; r < order.size(); ++r) {
      warmup[r] = std::min(warmup[r], warmup[0]);
      order[r] = rank_order(fwd, bwd, warmup[r]);
    }
  }
  return order;  // it finishes, or check_pipeline reports where it stalls
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

double ideal_bubble_fraction(int stages, int chunks, std::int64_t micro_batches) {
  const double p = stages;
  const double vm = static_cast<double>(chunks) * static_cast<double>(micro_batches);
  return (p - 1) / (vm + p - 1);
}

Problems check_pipeline(PipeSchedule s, int stages, int micro_batches, int chunks,
                        const std::string& at, int group) {
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
  if (group < 0) {
    out.push_back({at, fmt::format("a micro-batch group is at least 1, not {}", group)});
    return out;
  }
  if (s != PipeSchedule::Interleaved && group != 0) {
    out.push_back({at, fmt::format("{} has no micro-batch groups (microbatch_group is for "
                                   "interleaved)",
                                   pipe_schedule_name(s))});
  }
  if (s == PipeSchedule::OneFOneB && chunks != 1) {
    out.push_back({at, fmt::format("1f1b runs 1 chunk per rank, not {} (interleaved runs more)",
                                   chunks)});
  }
  if (s == PipeSchedule::Interleaved) {
    if (chunks < 2) {
      out.push_back({at, "interleaved needs at least 2 chunks (virtual stages) per rank"});
    } else if (group == 0 && micro_batches % stages != 0) {
      out.push_back({at, fmt::format("interleaved runs micro-batches in groups of the {} "
                                     "stages: {} micro-batches are not a multiple (set "
                                     "microbatch_group for Meta's variant, whose last group "
                                     "may be smaller)",
                                     stages, micro_batches)});
    }
  }
  // Megatron's own order (groups of p, m a multiple of p) always finishes; a group of the
  // user's is run dry first (O(p^2 m v) at worst, so not for every default order).
  if (out.empty() && s == PipeSchedule::Interleaved && group != 0) {
    const auto stalled =
        stalled_op(build_order(s, stages, micro_batches, chunks, group), micro_batches, chunks);
    if (stalled) {
      const auto& [rank, op] = *stalled;
      out.push_back(
          {at, fmt::format("the interleaved order with micro-batch groups of {} never finishes: "
                           "pipeline rank {} waits forever for the {} of micro-batch {} through "
                           "chunk {}; use a larger microbatch_group",
                           group_size(stages, micro_batches, group), rank,
                           op.forward ? "forward" : "backward", op.micro_batch, op.chunk)});
    }
  }
  return out;
}

std::vector<std::vector<PipeOp>> pipeline_order(PipeSchedule s, int p, int m, int v,
                                                int group) {
  HOPSIM_ASSERT(s != PipeSchedule::DualPipe && check_pipeline(s, p, m, v, "", group).empty(),
                "pipeline {} x {} x {} group {}", p, m, v, group);
  return build_order(s, p, m, v, group);
}

PipelineTasks add_pipeline(Plan& plan, const PipelineSpec& spec) {
  const int p = static_cast<int>(spec.gpus.size());
  const int v = spec.chunks;
  const std::vector<std::vector<PipeOp>> order =
      pipeline_order(spec.schedule, p, spec.micro_batches, v, spec.group);
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
    const topo::GpuId gpu = spec.gpus[static_cast<std::size_t>(r)];
    out.last_backward[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(v));
    for (const PipeOp& op : order[static_cast<std::size_t>(r)]) {
      const int stage = op.chunk * p + r;
      std::vector<std::pair<PlanTaskId, PlanTaskId>> built;
      if (spec.build_op) {
        built = spec.build_op(plan, r, op, stage);
      }
      std::vector<PlanTaskId> ids;  // per piece, its last task
      for (const auto& piece : built) {
        ids.push_back(piece.second);
      }
      if (built.empty()) {
        ids = add_op_tasks(plan, spec, op, gpu, stage, op.forward ? fwd_phase : bwd_phase);
      }
      out.ops[static_cast<std::size_t>(r)].push_back(ids.back());
      task_of[{stage, op.micro_batch, op.forward}] = {
          built.empty() ? ids.front() : built.front().first, ids.back()};
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
