// The folded training step under DualPipe: one GPU per pipeline rank running DualPipe's order
// (workloads/step/dualpipe.hpp) with the simulated layer times, each stage's gradients
// reduced once both ranks holding it are done with them, then the optimizer and the gathers.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/step/training_step_parts.hpp"
#include "workloads/step/dualpipe.hpp"

namespace hopsim::work::step_parts {

Time mixed_pair(const LayerTiming& f, Time backward, const LayerTiming& b) {
  const Time f_compute = f.forward - f.ep_exposed_forward;
  const Time b_compute = backward - b.ep_exposed_backward;
  const Time hidden = std::min(b.ep_exposed_backward, f_compute) +
                      std::min(f.ep_exposed_forward, b_compute);
  return f.forward + backward - hidden;
}

namespace {

// The output layer's kernels of one pass, each at `speed` for its class (1: as measured).
Time head_time(const KernelCosts& kernels, const KernelSpeeds& speed) {
  Time sum;
  for (const auto& [name, cost] : kernels) {
    sum += at_speed(cost.time, speed[static_cast<std::size_t>(cost.kind)]);
  }
  return sum;
}

// Each model stage's layers as measured (one pipeline rank's view): how many it holds, each
// one's timing, and the output layer's at the rank's slowest GPU's speed.
class StageLayers {
 public:
  StageLayers(const TrainingStepJob& job, const ModelSpec& model, const StepDetails& details,
              const StepMeasurements& m)
      : job_(job),
        model_(model),
        details_(details),
        m_(m),
        head_forward_(head_time(details.head.fwd, m.speed)),
        head_backward_(head_time(details.head.bwd, m.speed)) {}

  // Layers model stage `stage` holds.
  std::int64_t count(int stage) const {
    return details_.layers_per_stage[static_cast<std::size_t>(stage)];
  }

  const TrainingStepJob& job() const { return job_; }
  // The output layer's passes, at the rank's slowest GPU's speed.
  Time head_forward() const { return head_forward_; }
  Time head_backward() const { return head_backward_; }

  // Layer k of model stage `stage`'s measured timing (its kind's).
  const LayerTiming& timing(int stage, std::int64_t k) const {
    return moe_at(job_, model_, details_.first_layer[static_cast<std::size_t>(stage)] + k)
               ? *m_.sparse
               : *m_.dense;
  }

 private:
  const TrainingStepJob& job_;
  const ModelSpec& model_;
  const StepDetails& details_;
  const StepMeasurements& m_;
  Time head_forward_;
  Time head_backward_;
};

// Each stage's forward, backward, weight part and input part: its layers' one after the
// other, the last stage's with the head's.
void add_stage_times(DualStageTimes& spec, const StageLayers& layers, int stages) {
  for (int s = 0; s < stages; ++s) {
    Time f;
    Time bwd;
    Time w;
    for (std::int64_t k = 0; k < layers.count(s); ++k) {
      f += layers.timing(s, k).forward;
      bwd += backward_at(layers.job(), layers.timing(s, k), k);
      w += layers.timing(s, k).weight;
    }
    if (s == stages - 1) {
      f += layers.head_forward();
      bwd += layers.head_backward();
    }
    spec.forward.push_back(f);
    spec.backward.push_back(bwd);
    spec.weight.push_back(w);
    spec.backward_input.push_back(bwd - w);
  }
}

// A pair of stage sf's forward and stage sb's backward: their layers side by side, each
// MoE-with-MoE pair as simulated overlapped, a dense layer beside a MoE layer as mixed_pair,
// a layer without a partner alone.
Time pair_time(const StageLayers& layers, int stages, int sf, int sb) {
  Time t;
  const std::int64_t n = std::max(layers.count(sf), layers.count(sb));
  for (std::int64_t k = 0; k < n; ++k) {
    const bool has_f = k < layers.count(sf);
    const bool has_b = k < layers.count(sb);
    if (has_f && has_b && layers.timing(sf, k).moe && layers.timing(sb, k).moe) {
      t += pair_at(layers.job(), layers.timing(sf, k), k);
      continue;
    }
    if (has_f && has_b) {
      t += mixed_pair(layers.timing(sf, k), backward_at(layers.job(), layers.timing(sb, k), k),
                      layers.timing(sb, k));
      continue;
    }
    if (has_f) {
      t += layers.timing(sf, k).forward;
    }
    if (has_b) {
      t += backward_at(layers.job(), layers.timing(sb, k), k);
    }
  }
  if (sf == stages - 1) {
    t += layers.head_forward();
  }
  if (sb == stages - 1) {
    t += layers.head_backward();
  }
  return t;
}

// Every stage's and pair's times from the measured layers.
DualStageTimes stage_times(const StageLayers& layers, int stages) {
  DualStageTimes times;
  add_stage_times(times, layers, stages);
  for (int sf = 0; sf < stages; ++sf) {
    for (int sb = 0; sb < stages; ++sb) {
      times.pair.push_back(pair_time(layers, stages, sf, sb));
    }
  }
  return times;
}

// DualPipe's pipeline on the representatives, from the measured layers; each pipeline rank
// that perturbations touch runs its two stages at its own (its view in `views`).
DualPipeSpec dualpipe_spec(const TrainingStepJob& job, const BuildEnv& b,
                           const StepDetails& details, const StepMeasurements& m,
                           const std::vector<StepMeasurements>& views) {
  const int stages = details.stages;
  DualPipeSpec spec;
  static_cast<DualStageTimes&>(spec) =
      stage_times(StageLayers(job, *b.env.model, details, m), stages);
  spec.gpus = details.representatives;
  spec.micro_batches = static_cast<int>(details.micro_batches);
  spec.source = m.source;
  spec.activation_bytes = job.transfer_bytes(b.env.mesh.spec(), *b.env.model);
  for (const auto& rank : m.ranks) {
    const int r = rank.first;
    const StageLayers own(job, *b.env.model, details, views[static_cast<std::size_t>(r)]);
    spec.rank_times[r] = stage_times(own, stages);
  }
  return spec;
}

// One layer's gradient sync of each kind and the vocabulary's, as a pipeline rank's buckets
// take them: under DualPipe a DP collective spans the two ranks holding the same stages, so
// the slower of the two ranks' measurements.
struct RankSyncs {
  Time dense;
  Time moe;
  Time vocab;
};

RankSyncs rank_syncs(const TrainingStepJob& job, const BuildEnv& b,
                     const std::vector<StepMeasurements>& views, int r) {
  const ModelSpec& model = *b.env.model;
  const ParallelSpec& p = b.env.mesh.spec();
  const auto slower = [&](const DpKey& key) {
    return std::max(views[static_cast<std::size_t>(r)].dp_time(key),
                    views[static_cast<std::size_t>(p.pp - 1 - r)].dp_time(key));
  };
  RankSyncs out;
  out.dense = has_dense(job, model) ? slower(layer_sync_key(job, model, p, false)) : Time{};
  out.moe = has_moe(job, model) ? slower(layer_sync_key(job, model, p, true)) : Time{};
  out.vocab = slower(vocab_sync_key(job, model, p));
  return out;
}

// The gradient syncs of one stage's bucket: its layers' one after the other, and the
// embedding's or the head's on the first and last stage.
Time stage_sync_time(const StageLayers& layers, int stage, int stages, const RankSyncs& syncs) {
  Time t;
  for (std::int64_t k = 0; k < layers.count(stage); ++k) {
    t += layers.timing(stage, k).moe ? syncs.moe : syncs.dense;
  }
  if (stage == 0 || stage == stages - 1) {
    t += syncs.vocab;
  }
  return t;
}

// Pipeline rank r's gradient buckets, one per stage it holds (in the order its gradients are
// done), each once both ranks holding the stage have them, on the rank's DP stream; returns
// the last one.
std::optional<PlanTaskId> add_rank_syncs(Plan& plan, const DualPipeTasks& tasks,
                                         const StageLayers& layers, int r, topo::GpuId gpu,
                                         int ranks, std::uint32_t sync_phase,
                                         const RankSyncs& syncs) {
  const int stages = ranks;
  const auto& done = tasks.grads_done[static_cast<std::size_t>(r)];
  std::optional<PlanTaskId> prev;
  for (const int d : done[0] < done[1] ? std::array{0, 1} : std::array{1, 0}) {
    const int stage = dualpipe_stage(ranks, r, d);
    const Time t = stage_sync_time(layers, stage, stages, syncs);
    if (t == Time{}) {
      continue;
    }
    const PlanTaskId id = add_dp_hold(plan, gpu, t, sync_phase, "gradient sync");
    plan.add_dependency(done[static_cast<std::size_t>(d)], id);
    plan.add_dependency(
        tasks.grads_done[static_cast<std::size_t>(ranks - 1 - r)][static_cast<std::size_t>(1 - d)],
        id);
    prev = id;
  }
  return prev;
}

}  // namespace

std::vector<Case> dualpipe_case(const TrainingStepJob& job, const BuildEnv& b,
                                StepDetails details, const StepMeasurements& m) {
  const ParallelSpec& p = b.env.mesh.spec();
  const StepShape shape = job.shape(b.env);
  const int ranks = details.stages;
  std::vector<StepMeasurements> views;  // per pipeline rank: its own where perturbations touch it
  for (int r = 0; r < ranks; ++r) {
    views.push_back(m.at_rank(r));
  }
  DualPipeSpec spec = dualpipe_spec(job, b, details, m, views);
  Plan plan;
  const std::uint32_t sync_phase = plan.phase(PhaseKind::DpComm, PhasePass::Bwd);
  const double hbm = b.env.cluster.gpu.hbm_GBps * 1e9 * b.env.cluster.gpu.memory_efficiency;
  // The representatives' column, then any more whose activations share perturbed spine links
  // with it (partial folding), each the same ops on its own GPUs.
  const std::vector<topo::GpuId> representatives = details.representatives;
  for (std::size_t c = 0; c <= details.more_columns.size(); ++c) {
    details.representatives = c == 0 ? representatives : details.more_columns[c - 1];
    spec.gpus = details.representatives;
    const DualPipeTasks tasks = add_dualpipe(plan, spec);
    // Each stage's gradients, once both of its ranks have them: one bucket per stage, its
    // layers' syncs one after the other, on each holding rank's DP chain.
    for (int r = 0; r < ranks; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      const StageLayers layers(job, *b.env.model, details, views[ri]);
      const std::optional<PlanTaskId> prev = add_rank_syncs(
          plan, tasks, layers, r, spec.gpus[ri], ranks, sync_phase, rank_syncs(job, b, views, r));
      add_step_end(plan, details, job, shape, r, tasks.ops[ri].back(), prev,
                   hbm * views[ri].speed[static_cast<std::size_t>(KernelClass::Other)],
                   views[ri]);
    }
  }
  details.representatives = representatives;
  std::vector<Case> out;
  out.push_back(Case{fmt::format("{} dualpipe pp{} m{}", TrainingStepJob::kKind, p.pp,
                                 details.micro_batches),
                     std::move(plan),
                     fmt::format("dualpipe, zero {}", job.zero),
                     {},
                     std::move(details)});
  return out;
}

}  // namespace hopsim::work::step_parts
