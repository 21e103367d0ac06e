// The whole cluster's bytes of a folded step: each probe's bytes times the number of times the
// step runs what it measured, counted as the folded plan uses it (training_step_plan.cpp and
// training_step_dualpipe.cpp), so that a folded step reports what the unfolded one moves.
#include <cstdint>

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

// Adds `times` copies of the DP collective `key`'s probe; none for an empty key or one that
// was not declared (no DP group has two members: it moves nothing).
void add_dp(CaseTraffic& t, const Measured& m, const DpKey& key, std::int64_t times) {
  if (!key.empty() && m.find(dp_probe_name(key)) != nullptr) {
    add_probe(t, m, dp_probe_name(key), times);
  }
}

// The model's layers of one kind (MoE or dense), and how many of them full recomputation runs
// again before their backward.
std::pair<std::int64_t, std::int64_t> layers_of_kind(const TrainingStepJob& job,
                                                     const StepShape& shape, bool moe) {
  const ModelSpec& model = *shape.model;
  const std::vector<std::int64_t> per_stage = layers_per_stage(model.layers, model_stages(shape));
  const std::vector<std::int64_t> first = first_layers(per_stage);
  std::int64_t layers = 0;
  std::int64_t rebuilt = 0;
  for (std::size_t s = 0; s < per_stage.size(); ++s) {
    for (std::int64_t k = 0; k < per_stage[s]; ++k) {
      if (moe_at(job, model, first[s] + k) == moe) {
        ++layers;
        rebuilt += full_rebuilds(job.recompute, k) ? 1 : 0;
      }
    }
  }
  return {layers, rebuilt};
}

}  // namespace

CaseTraffic folded_traffic(const TrainingStepJob& job, const BuildEnv& b, const Measured& m) {
  const ModelSpec& model = *b.env.model;
  const ParallelSpec& p = b.env.mesh.spec();
  const bool dualpipe = job.schedule == PipeSchedule::DualPipe;
  const bool zero3 = job.zero >= 3 && !dualpipe;  // DualPipe syncs each stage once
  const std::int64_t micro_batches = job.micro_batches(p);
  const std::int64_t stage_gpus = b.env.mesh.size() / p.pp;
  const std::int64_t group_gpus = Mesh(TrainingStepJob::layer_spec(p)).size();
  HOPSIM_ASSERT(stage_gpus % group_gpus == 0, "{} GPUs per stage in layer groups of {}",
                stage_gpus, group_gpus);
  CaseTraffic t;
  // The plan: one GPU per stage, standing for every column of the mesh (tp x cp x dp of them),
  // or a few columns side by side (under perturbed spine links) standing for them together.
  t.plan_copies = stage_gpus;
  t.plan_columns = static_cast<std::int64_t>(pipeline_columns(job, b.env).size());
  // A layer probe is one layer of one micro-batch on one layer group: each stage runs each of
  // its layers for every micro-batch on each of its groups (forward again before the backward
  // where full recomputation rebuilds the layer). The DualPipe pair moves the same bytes as
  // the two passes.
  const std::int64_t runs = micro_batches * (stage_gpus / group_gpus);
  const StepShape shape = job.shape(b.env);
  for (const bool moe : {false, true}) {
    const auto [layers, rebuilt] = layers_of_kind(job, shape, moe);
    if (layers == 0) {
      continue;
    }
    add_probe(t, m, layer_probe_name(moe, Passes::Forward), (layers + rebuilt) * runs);
    add_probe(t, m, layer_probe_name(moe, Passes::Backward), layers * runs);
    // A DP probe is one stage's groups (under DualPipe both ranks holding it). Gradients are
    // reduced once per layer and step; under ZeRO-3 after every backward, and the parameters
    // are gathered before every forward and backward.
    add_dp(t, m, layer_sync_key(job, model, p, moe), layers * (zero3 ? micro_batches : 1));
    if (zero3) {
      add_dp(t, m, layer_gather_key(model, p, moe), layers * 2 * micro_batches);
    }
  }
  add_dp(t, m, vocab_sync_key(job, model, p), 2);  // the embedding's and the head's
  // Each rank's parameter gather after the optimizer; under DualPipe its probe covers the two
  // ranks that hold the same stages, each gathering that much.
  CaseTraffic gathers;
  for (int r = 0; r < p.pp; ++r) {
    add_dp(gathers, m, param_gather_key(job, shape, r), 1);
  }
  const std::int64_t holders = dualpipe ? 2 : 1;
  t.nvlink = t.nvlink + Bytes{gathers.nvlink.n / holders};
  t.ib = t.ib + Bytes{gathers.ib.n / holders};
  // Gradient clipping's norm, all-reduced over DP once per pipeline rank.
  CaseTraffic norms;
  add_dp(norms, m, norm_key(), p.pp);
  t.nvlink = t.nvlink + Bytes{norms.nvlink.n / holders};
  t.ib = t.ib + Bytes{norms.ib.n / holders};
  return t;
}

void leave_out_expanded(const Plan& plan, const topo::Cluster& cluster, CaseTraffic& t) {
  for (const PlanTask& task : plan.tasks()) {
    if (task.kind != PlanTaskKind::Flow || task.src == task.dst ||
        plan.phases()[task.phase].kind == PhaseKind::PpComm) {
      continue;
    }
    const topo::Route route = route_of(cluster, task);
    const RouteKinds kinds = route_kinds(cluster, route.span());
    if (kinds.nvlink) {
      t.plan_nvlink_apart = t.plan_nvlink_apart + task.bytes;
    }
    if (kinds.ib) {
      t.plan_ib_apart = t.plan_ib_apart + task.bytes;
    }
  }
}

}  // namespace hopsim::work::step_parts
