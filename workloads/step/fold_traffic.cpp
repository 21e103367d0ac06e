// The whole cluster's bytes of a folded step: each probe's bytes times the number of times the
// step runs what it measured, counted as the folded plan uses it (training_step_plan.cpp and
// training_step_dualpipe.cpp), so that a folded step reports what the unfolded one moves.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/assert.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/summary.hpp"
#include "workloads/step/partial_fold.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work::step_parts {
namespace {

// Adds `times` copies of probe `name`'s bytes.
void add_probe(CaseTraffic& t, const Measured& m, const std::string& name, std::int64_t times) {
  const ProbeResult& r = m.at(name);
  t.nvlink = t.nvlink + r.summary.nvlink_bytes * times;
  t.ib = t.ib + r.summary.ib_bytes * times;
}

// Adds `times` copies of the DP collective `key`'s probe (`suffix`: a stage's own); none for
// an empty key or one that was not declared (no DP group has two members: it moves nothing).
void add_dp(CaseTraffic& t, const Measured& m, const DpKey& key, std::int64_t times,
            const std::string& suffix = "") {
  if (!key.empty() && m.find(dp_probe_name(key) + suffix) != nullptr) {
    add_probe(t, m, dp_probe_name(key) + suffix, times);
  }
}

// Model stage `stage`'s layers of one kind (MoE or dense), and how many of them full
// recomputation runs again before their backward.
std::pair<std::int64_t, std::int64_t> stage_layers(const TrainingStepJob& job,
                                                   const StepShape& shape, int stage, bool moe) {
  const ModelSpec& model = *shape.model;
  const std::vector<std::int64_t> per_stage = stage_split(shape);
  const std::int64_t first = first_layers(per_stage)[static_cast<std::size_t>(stage)];
  std::int64_t layers = 0;
  std::int64_t rebuilt = 0;
  for (std::int64_t k = 0; k < per_stage[static_cast<std::size_t>(stage)]; ++k) {
    if (moe_at(job, model, first + k) == moe) {
      ++layers;
      rebuilt += full_rebuilds(job.recompute, k) ? 1 : 0;
    }
  }
  return {layers, rebuilt};
}

// How often one pipeline rank's layer group runs a layer kind's forward and backward probe:
// over the rank's order as the fold lays it, each forward through a stage runs its layers'
// forwards, each backward's input part (a whole backward, a split one's input part, a pair's
// backward half) its layers' backwards and, where full recomputation rebuilds them, their
// forwards again; a deferred weight part moves nothing of its own (the backward probe holds
// it). A pair moves the bytes of its two halves. `per_stage`: each stage's stage_layers.
std::pair<std::int64_t, std::int64_t> probe_runs(
    const std::vector<PipeOp>& ops,
    const std::vector<std::pair<std::int64_t, std::int64_t>>& per_stage) {
  std::int64_t forwards = 0;
  std::int64_t backwards = 0;
  for (const PipeOp& op : ops) {
    if (const auto f = forward_of(op)) {
      forwards += per_stage[static_cast<std::size_t>(f->stage)].first;
    }
    if (const auto b = input_gradient_of(op)) {
      const auto [layers, again] = per_stage[static_cast<std::size_t>(b->stage)];
      backwards += layers;
      forwards += again;
    }
  }
  return {forwards, backwards};
}

// The layer probes' bytes: each pipeline rank's layer groups run its order's layers; a group a
// link perturbation touches as its own probe measured it, the others as the healthy one.
void add_layers(CaseTraffic& t, const TrainingStepJob& job, const BuildEnv& b, const Measured& m,
                const Touched& touched) {
  const ParallelSpec& p = b.env.mesh.spec();
  const StepShape shape = job.shape(b.env);
  const PipeOrder order = schedule_order(*job.schedule, pipe_shape(shape));
  const std::int64_t groups =
      b.env.mesh.size() / p.pp / Mesh(TrainingStepJob::layer_spec(p)).size();
  std::vector<std::pair<std::int64_t, std::int64_t>> per_stage[2];
  for (int stage = 0; stage < model_stages(shape); ++stage) {
    for (const bool moe : {false, true}) {
      per_stage[moe ? 1 : 0].push_back(stage_layers(job, shape, stage, moe));
    }
  }
  for (int r = 0; r < p.pp; ++r) {
    for (const bool moe : {false, true}) {
      const auto [forwards, backwards] =
          probe_runs(order[static_cast<std::size_t>(r)], per_stage[moe ? 1 : 0]);
      if (backwards == 0) {
        continue;
      }
      const std::string fwd = layer_probe_name(moe, Passes::Forward);
      const std::string bwd = layer_probe_name(moe, Passes::Backward);
      std::int64_t healthy = groups;
      for (const TouchedGroup& g : touched.groups) {
        if (g.stage == r && g.links) {
          add_probe(t, m, fwd + g.probe, forwards);
          add_probe(t, m, bwd + g.probe, backwards);
          --healthy;
        }
      }
      add_probe(t, m, fwd, forwards * healthy);
      add_probe(t, m, bwd, backwards * healthy);
    }
  }
}

// The DP collectives' bytes. A DP probe is one stage's groups (where ranks share stages, as
// DualPipe's r and p - 1 - r do, all of theirs, counted once), measured on its own where a link
// perturbation touches it. Gradients are reduced once per layer and step; under ZeRO-3 after
// every backward, and the parameters are gathered before every forward and backward; the
// embedding's and the head's once; each rank's parameters gathered after the optimizer, and
// gradient clipping's norm all-reduced once per rank (where ranks share stages a probe covers
// all of them, each gathering that much: a share of a probe per rank).
void add_syncs(CaseTraffic& t, const TrainingStepJob& job, const BuildEnv& b, const Measured& m,
               const Touched& touched) {
  const ModelSpec& model = *b.env.model;
  const ParallelSpec& p = b.env.mesh.spec();
  const StepShape shape = job.shape(b.env);
  const bool zero3 = job.zero >= 3;  // whole passes only (check_simulated)
  const std::int64_t micro_batches = job.micro_batches(p);
  const int stages = model_stages(shape);
  const auto linked = [&](int r) { return std::ranges::find(touched.link_stages, r); };
  CaseTraffic per_rank;  // counted per rank: a share where ranks share stages
  for (int r = 0; r < p.pp; ++r) {
    const std::vector<int> ranks = sharing_ranks(shape, r);
    if (std::ranges::any_of(ranks, [r](int q) { return q < r; })) {
      continue;  // counted with the first rank that shares its stages
    }
    std::string suffix;
    for (const int q : ranks) {
      if (suffix.empty() && linked(q) != touched.link_stages.end()) {
        suffix = stage_suffix(q);
      }
    }
    std::vector<int> held;
    for (const int q : ranks) {
      for (const int s : rank_stages(shape, q)) {
        if (std::ranges::find(held, s) == held.end()) {
          held.push_back(s);
        }
      }
    }
    for (const int s : held) {
      for (const bool moe : {false, true}) {
        const std::int64_t layers = stage_layers(job, shape, s, moe).first;
        add_dp(t, m, layer_sync_key(job, model, p, moe), layers * (zero3 ? micro_batches : 1),
               suffix);
        if (zero3) {
          add_dp(t, m, layer_gather_key(model, p, moe), layers * 2 * micro_batches, suffix);
        }
      }
      // The embedding's with the first stage, the head's with the last.
      add_dp(t, m, vocab_sync_key(job, model, p), (s == 0 ? 1 : 0) + (s == stages - 1 ? 1 : 0),
             suffix);
    }
    for (const int q : ranks) {
      add_dp(per_rank, m, param_gather_key(job, shape, q), 1, suffix);
      add_dp(per_rank, m, norm_key(), 1, suffix);
    }
  }
  const auto holders = static_cast<std::int64_t>(sharing_ranks(shape, 0).size());
  t.nvlink = t.nvlink + Bytes{per_rank.nvlink.n / holders};
  t.ib = t.ib + Bytes{per_rank.ib.n / holders};
}

// The pipeline's activations: the folded plan's (its columns, on the run's cluster with its
// perturbed links) once, and the mesh's other columns as the healthy cluster routes the same
// flows. The plan's other flows (ranks partial folding runs as real traffic) the probes count.
void add_activations(CaseTraffic& t, const Plan& plan, const BuildEnv& b, std::int64_t mesh_columns,
                     std::int64_t simulated) {
  std::optional<topo::Cluster> healthy;
  if (!b.cluster.spec().perturbations.empty()) {
    topo::Spec spec = b.cluster.spec();
    spec.perturbations.clear();
    healthy.emplace(spec);
  }
  const topo::Cluster& rest_cluster = healthy ? *healthy : b.cluster;
  CaseTraffic here;
  CaseTraffic rest;
  const auto add = [](CaseTraffic& to, const topo::Cluster& cluster, const PlanTask& task) {
    const topo::Route route = route_of(cluster, task);
    const RouteKinds kinds = route_kinds(cluster, route.span());
    to.nvlink = to.nvlink + (kinds.nvlink ? task.bytes : Bytes{});
    to.ib = to.ib + (kinds.ib ? task.bytes : Bytes{});
  };
  for (const PlanTask& task : plan.tasks()) {
    if (task.kind == PlanTaskKind::Flow && task.src != task.dst &&
        plan.phases()[task.phase].kind == PhaseKind::PpComm) {
      add(here, b.cluster, task);
      add(rest, rest_cluster, task);
    }
  }
  const std::int64_t others = mesh_columns - simulated;
  t.nvlink = t.nvlink + here.nvlink + Bytes{rest.nvlink.n * others / simulated};
  t.ib = t.ib + here.ib + Bytes{rest.ib.n * others / simulated};
}

}  // namespace

CaseTraffic folded_traffic(const TrainingStepJob& job, const BuildEnv& b, const Measured& m,
                           const Plan& plan) {
  const ParallelSpec& p = b.env.mesh.spec();
  const std::int64_t stage_gpus = b.env.mesh.size() / p.pp;
  const std::int64_t group_gpus = Mesh(TrainingStepJob::layer_spec(p)).size();
  HOPSIM_ASSERT(stage_gpus % group_gpus == 0, "{} GPUs per stage in layer groups of {}", stage_gpus,
                group_gpus);
  CaseTraffic t;
  t.counted = true;
  const Touched touched_parts = touched(job, b.env);
  add_layers(t, job, b, m, touched_parts);
  add_syncs(t, job, b, m, touched_parts);
  // The plan's pipeline columns (one, or a few side by side under perturbed spine links) of
  // the mesh's tp x cp x dp.
  add_activations(t, plan, b, stage_gpus,
                  static_cast<std::int64_t>(pipeline_columns(job, b.env).size()));
  return t;
}

}  // namespace hopsim::work::step_parts
