// The unfolded step's ops as real layer subgraphs (unfolded_ops.hpp).
#include "workloads/step/unfolded_ops.hpp"

#include <algorithm>
#include <utility>

#include "sim/assert.hpp"
#include "sim/int_math.hpp"
#include "workloads/step/backward_parts.hpp"

namespace hopsim::work::step_parts {
namespace {

ParallelSpec one_stage(const ParallelSpec& p) {
  ParallelSpec s = p;
  s.pp = 1;
  return s;
}

// What a segment runs in an op that does `work`: a backward segment runs that work's part of
// the backward; forwards (a rebuild, or an op's) run whole.
OpWork segment_part(const Segment& seg, OpWork work) {
  return seg.forward || seg.pair ? OpWork::Forward
                                 : (work == OpWork::Pair ? OpWork::Backward : work);
}

}  // namespace

UnfoldedStage::UnfoldedStage(const TrainingStepJob& job, const BuildEnv& b, Plan& plan)
    : job_(job),
      b_(b),
      shape_(job.shape(b.env)),
      stage_mesh_(one_stage(b.env.mesh.spec())),
      stage_env_{b.env.cluster, b.env.nccl, stage_mesh_, b.env.model, b.env.seed, b.env.libraries},
      stage_build_{stage_env_, b.cluster, b.compute, b.routings} {
  join_phase_ = plan.phase(PhaseKind::Join, PhasePass::Step);
  const Mesh& mesh = b.env.mesh;
  const ParallelSpec& p = mesh.spec();
  for (std::int64_t r = 0; r < p.pp; ++r) {
    gpu_of_.emplace_back();
    for (int i = 0; i < stage_mesh_.size(); ++i) {  // the same TP, CP and DP coordinates
      gpu_of_.back().emplace_back(mesh.rank_of(stage_mesh_.coordinate(i, Dim::Tp),
                                               stage_mesh_.coordinate(i, Dim::Cp), r,
                                               stage_mesh_.coordinate(i, Dim::Dp)));
    }
    std::vector<std::int64_t> held;
    for (const int q : sharing_ranks(shape_, static_cast<int>(r))) {
      held.push_back(q);
    }
    dense_groups_.push_back(dense_dp_groups(mesh, held));
    expert_groups_.push_back(expert_dp_groups(mesh, held));
  }
}

PlanTaskId UnfoldedStage::join(Plan& plan, int rank, std::span<const PlanTaskId> before) const {
  const PlanTaskId j = plan.add_delay(gpus(rank).front(), Time{}, join_phase_);
  for (const PlanTaskId t : before) {
    plan.add_dependency(t, j);
  }
  return j;
}

PlanTaskId UnfoldedStage::collective(Plan& plan, int rank, CollectiveOp op, std::int64_t dense,
                                     std::int64_t expert, std::uint32_t phase,
                                     std::span<const PlanTaskId> after) const {
  const auto r = static_cast<std::size_t>(rank);
  const PlanTaskId join = plan.add_delay(gpus(rank).front(), Time{}, join_phase_);
  CollectiveJob c;
  c.op = op;
  c.algorithm = CollectiveAlgorithm::Auto;
  c.auto_protocol = true;
  c.streamed_rings = true;  // O(dp) flows, as the folded step's probes
  std::vector<PlanTaskId> done(after.begin(), after.end());
  const std::vector<PlanTaskId> starts(after.begin(), after.end());
  for (const auto& [bytes, groups] :
       {std::pair{dense, &dense_groups_[r]}, std::pair{expert, &expert_groups_[r]}}) {
    if (bytes > 0 && !groups->empty()) {
      const Handle h = add_collectives(plan, b_, c, *groups, Bytes{bytes}, phase, starts);
      done.insert(done.end(), h.done.begin(), h.done.end());
    }
  }
  for (const PlanTaskId t : done) {
    plan.add_dependency(t, join);
  }
  return join;
}

// ZeRO-3's prefetch within one op: the last gather, and the entries of the current unit and of
// the one before it.
struct UnfoldedOps::Prefetch {
  std::optional<PlanTaskId> gathered;
  PlanTaskId unit_start = 0;
  PlanTaskId prev_unit_start = 0;
};

// One op as it is added: its rank, stage and work, where it has got to, and its pieces.
struct UnfoldedOps::OpContext {
  int rank = 0;
  int stage = 0;
  OpWork work = OpWork::Forward;
  bool last = false;  // the rank's last op computing its stage's weight gradients
  PlanTaskId cur = 0;
  PlanTaskId piece_start = 0;
  bool rebuilt = false;  // the segment before was a backward's recomputed forward
  Prefetch prefetch;
  OpTasks out;
};

UnfoldedOps::UnfoldedOps(UnfoldedStage& stage, const StepDetails& details, const PipeOrder& order,
                         Plan& plan)
    : stage_(stage),
      details_(details),
      stages_(static_cast<int>(details.layers_per_stage.size())),
      next_op_(order.size(), 0),
      prev_(order.size()),
      reduced_(order.size()),
      comm_forward_(plan.phase(PhaseKind::PpComm, PhasePass::Fwd)),
      comm_backward_(plan.phase(PhaseKind::PpComm, PhasePass::Bwd)),
      sync_phase_(plan.phase(PhaseKind::DpComm, PhasePass::Bwd)),
      gather_forward_(plan.phase(PhaseKind::ParamGather, PhasePass::Fwd)),
      gather_backward_(plan.phase(PhaseKind::ParamGather, PhasePass::Bwd)) {
  for (const auto& ops : order) {
    last_weight_op_.emplace_back(static_cast<std::size_t>(stages_), ops.size());
    for (std::size_t k = 0; k < ops.size(); ++k) {
      if (const auto s = weights_of(ops[k])) {
        last_weight_op_.back()[static_cast<std::size_t>(*s)] = k;
      }
    }
  }
}

std::vector<Segment> UnfoldedOps::segments(int stage, bool forward, bool per_layer) const {
  const TrainingStepJob& job = stage_.job();
  const ModelSpec& model = *stage_.shape().model;
  const auto st = static_cast<std::size_t>(stage);
  const std::int64_t n = details_.layers_per_stage[st];
  std::vector<Segment> runs;
  std::vector<bool> rebuilt;  // per run: whether full recomputation runs its forward again
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t first = details_.first_layer[st];
    const std::int64_t position = forward ? k : n - 1 - k;
    const bool moe = moe_at(job, model, first + position);
    const bool again = full_rebuilds(job.recompute, position);
    if (!per_layer && !runs.empty() && runs.back().moe == moe && rebuilt.back() == again) {
      ++runs.back().layers;
    } else {
      runs.push_back({moe, forward, 1, first + position});
      rebuilt.push_back(again);
    }
  }
  std::vector<Segment> out;
  const bool last = stage == stages_ - 1;
  if (!forward && last) {
    out.push_back({false, false, 0, -1});
  }
  for (std::size_t k = 0; k < runs.size(); ++k) {
    if (!forward && rebuilt[k]) {
      out.push_back({runs[k].moe, true, runs[k].layers, -1});
    }
    out.push_back(runs[k]);
  }
  if (forward && last) {
    out.push_back({false, true, 0, -1});
  }
  return out;
}

std::vector<Segment> UnfoldedOps::pair_segments(int forward_stage, int backward_stage) const {
  const TrainingStepJob& job = stage_.job();
  const ModelSpec& model = *stage_.shape().model;
  const auto layer = [&](int s, std::int64_t k) {
    return details_.first_layer[static_cast<std::size_t>(s)] + k;
  };
  const std::int64_t nf = details_.layers_per_stage[static_cast<std::size_t>(forward_stage)];
  const std::int64_t nb = details_.layers_per_stage[static_cast<std::size_t>(backward_stage)];
  const bool measured = measures_pair(job, stage_.build().env.mesh.spec());
  std::vector<Segment> out;
  if (backward_stage == stages_ - 1) {
    out.push_back({false, false, 0, -1});
  }
  // Forward layer k beside backward layer k (the folded step's pairing, stage_times.cpp).
  for (std::int64_t k = 0; k < std::max(nf, nb); ++k) {
    const bool f_moe = k < nf && moe_at(job, model, layer(forward_stage, k));
    const bool b_moe = k < nb && moe_at(job, model, layer(backward_stage, k));
    if (k < nb && full_rebuilds(job.recompute, k)) {
      out.push_back({b_moe, true, 1, -1});
    }
    if (measured && k < nf && k < nb && f_moe && b_moe) {
      out.push_back({true, false, 1, layer(backward_stage, k), true});
      continue;
    }
    if (k < nf) {
      out.push_back({f_moe, true, 1, layer(forward_stage, k)});
    }
    if (k < nb) {
      out.push_back({b_moe, false, 1, layer(backward_stage, k)});
    }
  }
  if (forward_stage == stages_ - 1) {
    out.push_back({false, true, 0, -1});
  }
  return out;
}

const Piece& UnfoldedOps::piece(const Segment& seg, OpWork part) {
  const auto key = std::tuple{seg.moe, seg.forward, seg.layers, part, seg.pair};
  auto it = pieces_.find(key);
  if (it != pieces_.end()) {
    return it->second;
  }
  const TrainingStepJob& job = stage_.job();
  Plan plan;
  if (seg.pair) {  // the MoE layer's pair, as the folded step's probe runs it
    plan = moe_pair_plan(job, stage_.stage_build());
  } else if (seg.layers == 0) {  // the output layer: its kernels on every GPU of the stage
    const std::uint32_t phase =
        plan.phase(PhaseKind::Head, seg.forward ? PhasePass::Fwd : PhasePass::Bwd);
    const KernelCosts kernels = seg.forward ? details_.head.fwd : run_order(details_.head.bwd);
    for (int g = 0; g < stage_.stage_mesh().size(); ++g) {
      for (const auto& [name, cost] : kernels) {
        plan.add_compute(ComputeTask{topo::GpuId{g}, cost.time, cost.flops, cost.source, phase,
                                     kComputeStream, name, cost.kind});
      }
    }
  } else {
    plan = std::move(
        one_layer(job.layer, seg.moe, seg.forward ? Passes::Forward : Passes::Backward, seg.layers)
            .cases(stage_.stage_build())
            .front()
            .plan);
  }
  return pieces_.emplace(key, make_piece(backward_part(plan, part))).first->second;
}

// Selective recomputation's kernels before one layer's backward: its recomputed modules'
// forward kernels (selective_recompute_time, from the layer's own forward) on every GPU.
const Piece& UnfoldedOps::recompute_piece(bool moe) {
  std::optional<Piece>& p = recompute_[moe ? 1 : 0];
  if (!p) {
    const Piece& forward = piece({moe, true, 1, -1}, OpWork::Forward);
    KernelTally kernels;
    for (const PlanTask& t : forward.plan.tasks()) {
      if (t.kind == PlanTaskKind::Compute) {
        kernels.add(t.kernel, t.duration);
      }
    }
    const int gpus = stage_.stage_mesh().size();
    const Time t =
        selective_recompute_time(stage_.job(), *stage_.shape().model, moe, kernels, gpus);
    Plan plan;
    const std::uint32_t phase = plan.phase(PhaseKind::Main, PhasePass::Bwd);
    for (int g = 0; g < gpus; ++g) {
      plan.add_compute(ComputeTask{topo::GpuId{g}, t, Flops{}, Source::Roofline, phase,
                                   kComputeStream, "recompute"});
    }
    p = make_piece(std::move(plan));
  }
  return *p;
}

PlanTaskId UnfoldedOps::add(Plan& plan, const Segment& seg, OpWork part, int rank,
                            PlanTaskId after) {
  return add_piece(plan, piece(seg, part), stage_.gpus(rank), after, stage_.join_phase());
}

PlanTaskId UnfoldedOps::start_unit(Plan& plan, int rank, const Segment& seg, bool forward,
                                   Prefetch& f, PlanTaskId cur) {
  f.prev_unit_start = f.unit_start;
  f.unit_start = cur;
  if (seg.layers > 0) {
    const StageParams lp =
        layer_params_per_gpu(*stage_.shape().model, stage_.build().env.mesh.spec(), seg.moe);
    std::vector<PlanTaskId> after{f.prev_unit_start};
    if (f.gathered) {
      after.push_back(*f.gathered);
    }
    f.gathered = stage_.collective(plan, rank, CollectiveOp::AllGather,
                                   static_cast<std::int64_t>(lp.dense * 2),
                                   static_cast<std::int64_t>(lp.expert * 2),
                                   forward ? gather_forward_ : gather_backward_, after);
    const PlanTaskId both[] = {cur, *f.gathered};
    cur = stage_.join(plan, rank, both);
  }
  return cur;
}

void UnfoldedOps::reduce_grads(Plan& plan, int rank, double dense, double expert, PlanTaskId cur) {
  auto& chain = reduced_[static_cast<std::size_t>(rank)];
  std::vector<PlanTaskId> after{cur};
  if (chain) {
    after.push_back(*chain);
  }
  const double bytes = stage_.job().grad_bytes;
  chain = stage_.collective(plan, rank, CollectiveOp::ReduceScatter,
                            static_cast<std::int64_t>(dense * bytes),
                            static_cast<std::int64_t>(expert * bytes), sync_phase_, after);
}

void UnfoldedOps::reduce_segment(Plan& plan, int rank, int stage, const Segment& seg, bool last,
                                 PlanTaskId cur) {
  const ModelSpec& model = *stage_.shape().model;
  const ParallelSpec& p = stage_.build().env.mesh.spec();
  if (seg.layers > 0) {
    const StageParams lp = layer_params_per_gpu(model, p, seg.moe);
    reduce_grads(plan, rank, lp.dense, lp.expert, cur);
  }
  if (last && (seg.layers == 0 || (stage == 0 && seg.last_index == 0))) {
    reduce_grads(plan, rank, d(model.vocab) * d(model.hidden) / d(p.tp), 0, cur);
  }
}

// One segment of an op: ZeRO-3's gather before a unit, selective recomputation's kernels
// before a layer's backward, the segment, ZeRO-3's reduce after a backward; a piece ends after
// each layer's backward part (its gradient bucket may start there).
void UnfoldedOps::add_segment(Plan& plan, OpContext& c, const Segment& seg) {
  const TrainingStepJob& job = stage_.job();
  const bool zero3 = job.zero >= 3;
  const bool op_forward = c.work == OpWork::Forward;
  const bool backward_layer = !seg.forward && seg.layers > 0 && !seg.pair;
  const bool pair_op = c.work == OpWork::Pair;
  // A unit: a layer's forward, its backward (with its recomputed forward), the head.
  const bool starts_unit = op_forward || seg.layers == 0 || seg.forward || !c.rebuilt;
  c.rebuilt = !op_forward && seg.forward && seg.layers > 0;
  if (zero3 && starts_unit) {
    c.cur = start_unit(plan, c.rank, seg, op_forward, c.prefetch, c.cur);
  }
  if ((backward_layer || (seg.pair && pair_op)) && c.work != OpWork::Weight &&
      job.recompute.granularity == Recompute::Selective) {
    c.cur =
        add_piece(plan, recompute_piece(seg.moe), stage_.gpus(c.rank), c.cur, stage_.join_phase());
  }
  c.cur = add(plan, seg, segment_part(seg, c.work), c.rank, c.cur);
  if (zero3 && !op_forward && !seg.forward) {
    reduce_segment(plan, c.rank, c.stage, seg, c.last, c.cur);
  }
  if (backward_layer && !pair_op) {  // a pair is one piece
    c.out.pieces.emplace_back(c.piece_start, c.cur);
    c.piece_start = c.cur;
  }
}

OpTasks UnfoldedOps::add_op(Plan& plan, int rank, const PipeOp& op) {
  const auto r = static_cast<std::size_t>(rank);
  const std::size_t k = next_op_[r]++;
  const PlanTaskId in = plan.add_delay(stage_.gpus(rank).front(), Time{}, stage_.join_phase());
  if (prev_[r]) {
    plan.add_dependency(*prev_[r], in);
  }
  const std::optional<int> weights = weights_of(op);
  OpContext c{rank,    op.stage,
              op.work, weights && last_weight_op_[r][static_cast<std::size_t>(*weights)] == k,
              in,      in,
              false,   Prefetch{std::nullopt, in, in},
              {}};
  const bool zero3 = stage_.job().zero >= 3;
  const bool per_layer =
      c.last || zero3 || stage_.job().recompute.granularity == Recompute::Selective;
  std::vector<Segment> segs = op.work == OpWork::Pair
                                  ? pair_segments(op.stage, op.pair_stage)
                                  : segments(op.stage, op.work == OpWork::Forward, per_layer);
  for (const Segment& seg : segs) {
    if (op.work == OpWork::Weight && seg.forward) {
      continue;  // recomputation belongs to the input part
    }
    add_segment(plan, c, seg);
  }
  if (c.out.pieces.empty() || c.piece_start != c.cur) {
    c.out.pieces.emplace_back(c.piece_start, c.cur);
  }
  prev_[r] = c.cur;
  return c.out;
}

void UnfoldedOps::cross(Plan& plan, int from, int to, PlanTaskId before, PlanTaskId after,
                        bool forward) {
  const auto& a = stage_.gpus(from);
  const auto& b = stage_.gpus(to);
  if (from == to) {
    plan.add_dependency(before, after);
    return;
  }
  const Bytes act =
      stage_.job().transfer_bytes(stage_.build().env.mesh.spec(), *stage_.shape().model);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const PlanTaskId f = plan.add_flow(a[i], b[i], act, forward ? comm_forward_ : comm_backward_);
    plan.add_dependency(before, f);
    plan.add_dependency(f, after);
  }
}

}  // namespace hopsim::work::step_parts
