// A link-perturbed pipeline rank run as real traffic in the folded plan (expanded_ranks.hpp).
#include "workloads/step/expanded_ranks.hpp"

#include <algorithm>
#include <utility>

#include "sim/assert.hpp"

namespace hopsim::work::step_parts {
namespace {

// Whether the layer group measured `group_time` (dense, MoE) sets the pace of every layer kind
// of the rank seen as `view`.
bool paces(const StepMeasurements& view, const std::array<Time, 2>& group_time) {
  for (const bool moe : {false, true}) {
    const std::optional<LayerTiming>& t = moe ? view.sparse : view.dense;
    if (t && t->forward + t->backward != group_time[moe ? 1 : 0]) {
      return false;
    }
  }
  return true;
}

// The output layer's kernels of one pass on every GPU of a group, each at its `speed`.
Piece head_piece(const KernelCosts& kernels, bool forward, std::span<const KernelSpeeds> speed) {
  Plan plan;
  const std::uint32_t phase =
      plan.phase(PhaseKind::Head, forward ? PhasePass::Fwd : PhasePass::Bwd);
  for (std::size_t g = 0; g < speed.size(); ++g) {
    for (const auto& [name, cost] : forward ? kernels : run_order(kernels)) {
      plan.add_compute(ComputeTask{topo::GpuId{static_cast<int>(g)}, cost.time, cost.flops,
                                   cost.source, phase, kComputeStream, name, cost.kind});
    }
  }
  plan.slow_compute(speed);
  return make_piece(std::move(plan));
}

// Selective recomputation's kernels before one layer's backward: `t` on every GPU of a group.
Piece recompute_piece(Time t, std::size_t gpus, Source source) {
  Plan plan;
  const std::uint32_t phase = plan.phase(PhaseKind::Main, PhasePass::Bwd);
  for (std::size_t g = 0; g < gpus; ++g) {
    plan.add_compute(ComputeTask{topo::GpuId{static_cast<int>(g)}, t, Flops{}, source, phase,
                                 kComputeStream, "recompute"});
  }
  return make_piece(std::move(plan));
}

}  // namespace

ExpandedRanks::ExpandedRanks(const TrainingStepJob& job, const BuildEnv& b,
                             const StepDetails& details, const StepMeasurements& m)
    : job_(job), b_(b), details_(details) {
  if (b.env.cluster.perturbations.empty() || job.zero >= 3 || !job.schedule->plain_ops() ||
      !details.offload_copy.empty()) {
    return;
  }
  const Touched t = touched(job, b.env);
  for (const TouchedGroup& g : t.groups) {
    const auto stage = static_cast<std::size_t>(g.stage);
    if (!g.links || std::ranges::find(g.gpus, details.representatives[stage]) == g.gpus.end()) {
      continue;
    }
    const StepMeasurements view = m.at_rank(g.stage);
    if (paces(view, m.ranks.at(g.stage).group_time.at(g.probe))) {
      expand(g.stage, g, view);
    }
  }
  if (any()) {
    for (int g = 0; g < b.env.mesh.size(); ++g) {
      every_gpu_.emplace_back(g);
    }
  }
}

void ExpandedRanks::expand(int rank, const TouchedGroup& g, const StepMeasurements& view) {
  Rank r;
  r.gpus = g.gpus;
  r.gpu = details_.representatives[static_cast<std::size_t>(rank)];
  for (const bool moe : {false, true}) {
    const std::optional<LayerTiming>& t = moe ? view.sparse : view.dense;
    if (!t) {
      continue;
    }
    const std::size_t k = moe ? 1 : 0;
    for (const Passes passes : {Passes::Forward, Passes::Backward}) {
      Plan plan = layer_plan(job_, b_, moe, passes);
      plan.slow_compute(g.speed);
      (passes == Passes::Forward ? r.forward : r.backward)[k] = make_piece(std::move(plan));
    }
    if (job_.recompute.granularity == Recompute::Selective && t->recomputed > Time{}) {
      r.recompute[k] = recompute_piece(t->recomputed, g.gpus.size(), view.source);
    }
  }
  if (rank == details_.stages - 1) {  // it holds the last model stage
    r.head_forward = head_piece(details_.head.fwd, true, g.speed);
    r.head_backward = head_piece(details_.head.bwd, false, g.speed);
  }
  ranks_.emplace(rank, std::move(r));
}

bool ExpandedRanks::runs(int rank, topo::GpuId gpu) const {
  const auto it = ranks_.find(rank);
  return it != ranks_.end() && std::ranges::find(it->second.gpus, gpu) != it->second.gpus.end();
}

std::vector<std::pair<PlanTaskId, PlanTaskId>> ExpandedRanks::add_op(Plan& plan, int rank,
                                                                     topo::GpuId gpu,
                                                                     const PipeOp& op) {
  if (!runs(rank, gpu)) {
    return {};
  }
  Rank& r = ranks_.at(rank);
  const int stage = op.stage;
  const bool forward = op.work == OpWork::Forward;
  HOPSIM_ASSERT(forward || op.work == OpWork::Backward, "an expanded rank runs whole passes");
  const auto [added, fresh] = r.ops.try_emplace({stage, op.micro_batch, forward});
  if (!fresh) {
    return added->second;  // another column's GPU in the group: the same op
  }
  const std::uint32_t join = plan.phase(PhaseKind::Join, PhasePass::Step);
  const PlanTaskId entry = plan.add_delay(r.gpu, Time{}, join);
  if (r.last) {
    plan.add_dependency(*r.last, entry);
  }
  const auto st = static_cast<std::size_t>(stage);
  const std::int64_t n = details_.layers_per_stage[st];
  const bool last_stage = stage == static_cast<int>(details_.layers_per_stage.size()) - 1;
  const auto kind = [&](std::int64_t k) {
    return moe_at(job_, *b_.env.model, details_.first_layer[st] + k) ? 1U : 0U;
  };
  PlanTaskId cur = entry;
  const auto put = [&](const Piece& p) { cur = add_piece(plan, p, r.gpus, cur, join); };
  std::vector<std::pair<PlanTaskId, PlanTaskId>> out;
  if (forward) {
    for (std::int64_t k = 0; k < n; ++k) {
      put(*r.forward[kind(k)]);
    }
    if (last_stage) {
      put(*r.head_forward);
    }
    out.emplace_back(entry, cur);
  } else {
    if (last_stage) {
      put(*r.head_backward);
    }
    PlanTaskId start = entry;
    for (std::int64_t k = n - 1; k >= 0; --k) {  // a piece per layer, the last layer first
      if (full_rebuilds(job_.recompute, k)) {
        put(*r.forward[kind(k)]);
      } else if (r.recompute[kind(k)]) {
        put(*r.recompute[kind(k)]);
      }
      put(*r.backward[kind(k)]);
      out.emplace_back(start, cur);
      start = cur;
    }
  }
  r.last = cur;
  spans_.push_back({r.gpu, forward, entry, cur});
  added->second = out;
  return out;
}

const Piece& ExpandedRanks::bucket_piece(int rank, const DpKey& key) {
  auto it = buckets_.find({rank, key});
  if (it == buckets_.end()) {
    it = buckets_.emplace(std::pair{rank, key}, make_piece(dp_plan(job_, b_, key, rank))).first;
  }
  return it->second;
}

PlanTaskId ExpandedRanks::add_bucket(Plan& plan, int rank, const DpKey& key,
                                     std::span<const PlanTaskId> after) {
  const std::uint32_t join = plan.phase(PhaseKind::Join, PhasePass::Step);
  const PlanTaskId start = plan.add_delay(ranks_.at(rank).gpu, Time{}, join);
  for (const PlanTaskId a : after) {
    plan.add_dependency(a, start);
  }
  const PlanTaskId end = add_piece(plan, bucket_piece(rank, key), every_gpu_, start, join);
  ranks_.at(rank).last_bucket = end;
  return end;
}

}  // namespace hopsim::work::step_parts
