// The folded training step under DualPipe: one GPU per pipeline rank running DualPipe's order
// (workloads/step/dualpipe.hpp) with the simulated layer times, each stage's gradients
// reduced once both ranks holding it are done with them, then the optimizer and the gathers.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/step/training_step_parts.hpp"
#include "workloads/step/dualpipe.hpp"

namespace hopsim::work::step_parts {

std::vector<Case> dualpipe_case(const TrainingStepJob& job, const BuildEnv& b,
                                StepDetails details, const StepMeasurements& m,
                                const std::optional<GradSync>& dense_sync,
                                const std::optional<GradSync>& moe_sync, Time vocab_sync) {
  const ParallelSpec& p = b.env.mesh.spec();
  const ModelSpec& model = *b.env.model;
  const StepShape shape = job.shape(b.env);
  const int ranks = details.stages;
  const int stages = ranks;
  const std::vector<std::int64_t>& first = details.first_layer;
  const auto timing = [&](int stage, std::int64_t k) -> const LayerTiming& {
    return moe_at(job, model, first[static_cast<std::size_t>(stage)] + k) ? *m.sparse : *m.dense;
  };
  const auto layers = [&](int stage) { return details.layers_per_stage[static_cast<std::size_t>(stage)]; };

  DualPipeSpec spec;
  spec.gpus = details.representatives;
  spec.micro_batches = static_cast<int>(details.micro_batches);
  spec.source = m.source;
  spec.activation_bytes = job.transfer_bytes(p, model);
  for (int s = 0; s < stages; ++s) {
    Time f;
    Time bwd;
    Time w;
    for (std::int64_t k = 0; k < layers(s); ++k) {
      f += timing(s, k).forward;
      bwd += timing(s, k).backward;
      w += timing(s, k).weight;
    }
    if (s == stages - 1) {
      f += details.head_forward;
      bwd += details.head_backward;
    }
    spec.forward.push_back(f);
    spec.backward.push_back(bwd);
    spec.weight.push_back(w);
    spec.backward_input.push_back(bwd - w);
  }
  // A pair: the forward's and the backward's layers side by side, each MoE-with-MoE pair as
  // simulated overlapped, the rest one after the other.
  for (int sf = 0; sf < stages; ++sf) {
    for (int sb = 0; sb < stages; ++sb) {
      Time t;
      const std::int64_t n = std::max(layers(sf), layers(sb));
      for (std::int64_t k = 0; k < n; ++k) {
        const bool has_f = k < layers(sf);
        const bool has_b = k < layers(sb);
        if (has_f && has_b && timing(sf, k).moe && timing(sb, k).moe) {
          t += timing(sf, k).pair;
          continue;
        }
        if (has_f) {
          t += timing(sf, k).forward;
        }
        if (has_b) {
          t += timing(sb, k).backward;
        }
      }
      if (sf == stages - 1) {
        t += details.head_forward;
      }
      if (sb == stages - 1) {
        t += details.head_backward;
      }
      spec.pair.push_back(t);
    }
  }
  Plan plan;
  const DualPipeTasks tasks = add_dualpipe(plan, spec);

  // Each stage's gradients, once both of its ranks have them: one bucket per stage, its
  // layers' syncs one after the other, on each holding rank's DP chain.
  const std::uint32_t sync_phase = plan.phase("dp_comm", "bwd");
  for (int r = 0; r < ranks; ++r) {
    const int gpu = spec.gpus[static_cast<std::size_t>(r)];
    const auto& done = tasks.grads_done[static_cast<std::size_t>(r)];
    std::optional<PlanTaskId> prev;
    for (const int d : done[0] < done[1] ? std::array{0, 1} : std::array{1, 0}) {
      const int stage = dualpipe_stage(ranks, r, d);
      Time t;
      for (std::int64_t k = 0; k < layers(stage); ++k) {
        t += timing(stage, k).moe ? moe_sync->time : dense_sync->time;
      }
      if (stage == 0 || stage == stages - 1) {
        t += vocab_sync;
      }
      if (t == Time{}) {
        continue;
      }
      const PlanTaskId id = plan.add_delay(gpu, t, sync_phase);
      plan.set_label(id, "gradient sync");
      plan.add_dependency(done[static_cast<std::size_t>(d)], id);
      plan.add_dependency(
          tasks.grads_done[static_cast<std::size_t>(ranks - 1 - r)][static_cast<std::size_t>(1 - d)],
          id);
      if (prev) {
        plan.add_dependency(*prev, id);
      }
      prev = id;
    }
    add_step_end(plan, details, job, shape, r, tasks.ops[static_cast<std::size_t>(r)].back(),
                 prev, b.env.cluster.gpu.hbm_GBps * 1e9, m);
  }
  std::vector<Case> out;
  out.push_back(Case{fmt::format("{} dualpipe pp{} m{}", TrainingStepJob::kKind, p.pp,
                                 details.micro_batches),
                     std::move(plan),
                     fmt::format("dualpipe, zero {}", job.zero),
                     {},
                     {},
                     {},
                     std::move(details)});
  return out;
}

}  // namespace hopsim::work::step_parts
