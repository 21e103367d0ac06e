// The folded training step assembled from its measurements (training_step_job.hpp says how it
// folds; training_step_probes.cpp what it measures).
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/assert.hpp"
#include "workloads/step/expanded_ranks.hpp"
#include "workloads/step/training_step_parts.hpp"
#include "workloads/step/param_prefetch.hpp"

namespace hopsim::work::step_parts {
namespace {

GradSync grad_sync(const TrainingStepJob& job, const ModelSpec& model, const ParallelSpec& p,
                   bool moe, const StepMeasurements& m) {
  GradSync g;
  g.moe = moe;
  const StageParams params = layer_params_per_gpu(model, p, moe);
  g.time = m.dp_time(layer_sync_key(job, model, p, moe));
  g.bytes_per_gpu = (params.dense + params.expert) * job.grad_bytes;
  if (job.zero >= 3) {
    g.gather = m.dp_time(layer_gather_key(model, p, moe));
  }
  return g;
}

std::string folding_words(const TrainingStepJob& job, const BuildEnv& b,
                          const StepDetails& details) {
  const ParallelSpec& p = b.env.mesh.spec();
  const ParallelSpec lp = TrainingStepJob::layer_spec(p);
  const std::int64_t sync_stages = job.schedule == PipeSchedule::DualPipe ? 2 : 1;
  return fmt::format(
      "{} GPUs folded: each layer kind simulated on one {}-GPU layer group (tp {} x cp {}{}), "
      "one layer's gradient sync on one stage's {} GPUs, the pipeline on one GPU per stage "
      "({}){}",
      details.gpus, lp.tp * lp.cp * lp.dp, p.tp, p.cp,
      lp.dp > 1 ? fmt::format(" x {} for ep {}", lp.dp, p.ep) : std::string(),
      b.env.mesh.size() / p.pp * sync_stages, p.pp,
      details.more_columns.empty()
          ? std::string()
          : fmt::format(" in {} columns side by side (their activations share perturbed spine "
                        "links)",
                        details.more_columns.size() + 1));
}

// Partial folding in words: per pipeline rank that perturbations touch, the layer group that
// set its pace and how much slower its layers ran, its slowest GPU's speed.
std::string touched_words(const StepMeasurements& m) {
  std::string out;
  for (const auto& [rank, r] : m.ranks) {
    std::vector<std::string> parts;
    for (const bool moe : {false, true}) {
      const std::optional<LayerTiming>& slow = moe ? r.sparse : r.dense;
      const std::optional<LayerTiming>& healthy = moe ? m.sparse : m.dense;
      const std::string& group = r.paced_by[moe ? 1 : 0];
      if (slow && healthy && !group.empty()) {
        const double ratio = (slow->forward + slow->backward).seconds() /
                             (healthy->forward + healthy->backward).seconds();
        parts.push_back(fmt::format("{} layers {:+.2f}% on {}", moe ? "MoE" : "dense",
                                    100 * (ratio - 1), group));
      }
    }
    const double optimizer = r.speed[static_cast<std::size_t>(KernelClass::Other)];
    if (optimizer != 1.0) {
      parts.push_back(fmt::format("optimizer at {:.3g}", optimizer));
    }
    if (!r.dp.empty()) {
      parts.push_back("DP collectives measured on its own DP groups");
    }
    if (parts.empty()) {
      parts.emplace_back("no layer group slower");
    }
    out += fmt::format("; pipeline rank {} touched: {}", rank, fmt::join(parts, ", "));
  }
  return out;
}

// One gradient bucket: its DP collective and measured time.
struct Bucket {
  DpKey key;
  Time time;
};

// The pipeline ranks run as real traffic, in words.
std::string expanded_words(const ExpandedRanks& expanded,
                           const std::vector<topo::GpuId>& representatives, int stages) {
  std::vector<int> ranks;
  for (int r = 0; r < stages; ++r) {
    if (expanded.runs(r, representatives[static_cast<std::size_t>(r)])) {
      ranks.push_back(r);
    }
  }
  if (ranks.empty()) {
    return {};
  }
  return fmt::format("; pipeline rank{} {} run as {} layer group's real layers and DP "
                     "collectives (they share the perturbed links)",
                     ranks.size() > 1 ? "s" : "", fmt::join(ranks, ", "),
                     ranks.size() > 1 ? "their" : "its");
}

// The step's gradient syncs, per layer kind and for the vocabulary, and each as a bucket.
struct Syncs {
  std::optional<GradSync> dense;
  std::optional<GradSync> moe;
  Bucket dense_bucket;
  Bucket moe_bucket;
  Bucket vocab_bucket;
};

// Activation offload (pp 1): layer l's copy to the host runs beside layer l + 1's forward and
// its copy back beside layer l + 1's backward, on the GPU's copy engines; where a copy takes
// longer, layer l + 1's forward ends late (the next layer needs the buffer) and layer l's
// backward starts late (it needs its activations).
void offload_waits(const TrainingStepJob& job, const ModelSpec& model, const StepMeasurements& m,
                   StepDetails& details) {
  const auto timing = [&](std::size_t l) -> const LayerTiming& {
    return moe_at(job, model, static_cast<std::int64_t>(l)) ? *m.sparse : *m.dense;
  };
  for (std::size_t l = 0; l < details.offload_copy.size(); ++l) {
    const Time copy = details.offload_copy[l];
    const LayerTiming& next = timing(l + 1);
    const Time fwd = next.forward;
    const Time bwd = backward_at(job, next, static_cast<std::int64_t>(l + 1));
    details.offload_wait_forward.push_back(copy > fwd ? copy - fwd : Time{});
    details.offload_wait_backward.push_back(copy > bwd ? copy - bwd : Time{});
  }
}

// One model stage's forward and backward over its layers in order (the head last) and back
// (the head first); under ZeRO-3 each layer waits for its parameters' gather, prefetched. In a
// backward a layer's gather shares the DP links with the reduce-scatters of the layers that
// computed before it: each gather is charged with one layer's reduce-scatter, its own layer's
// (the same size, except where dense and MoE layers meet). Returns the time waited for gathers.
Time add_stage_passes(const TrainingStepJob& job, const ModelSpec& model,
                      const StepDetails& details, const StepMeasurements& m, const Syncs& syncs,
                      int s, PipelineSpec& pipe) {
  std::vector<Time> fwd;
  std::vector<Time> bwd;
  std::vector<Time> gather;
  std::vector<Time> gather_back;
  const auto n = details.layers_per_stage[static_cast<std::size_t>(s)];
  for (std::int64_t l = 0; l < n; ++l) {
    const bool moe = moe_at(job, model, details.first_layer[static_cast<std::size_t>(s)] + l);
    const LayerTiming& t = moe ? *m.sparse : *m.dense;
    const GradSync& sync = *(moe ? syncs.moe : syncs.dense);
    fwd.push_back(t.forward);
    bwd.insert(bwd.begin(), backward_at(job, t, l));
    gather.push_back(job.zero >= 3 ? sync.gather : Time{});
    gather_back.insert(gather_back.begin(), job.zero >= 3 ? sync.gather + sync.time : Time{});
  }
  for (std::size_t l = 0; l < details.offload_wait_forward.size(); ++l) {  // pp 1 only
    fwd[l + 1] += details.offload_wait_forward[l];
    bwd[static_cast<std::size_t>(n) - 1 - l] += details.offload_wait_backward[l];
  }
  if (s == details.stages * job.virtual_stages - 1) {
    // The output layer's kernels, each at the stage's slowest GPU's speed for its class (1:
    // healthy, their sum as measured).
    const auto slowed = [&m](const KernelCosts& kernels) {
      Time sum;
      for (const auto& [name, cost] : kernels) {
        sum += at_speed(cost.time, m.speed[static_cast<std::size_t>(cost.kind)]);
      }
      return sum;
    };
    fwd.push_back(slowed(details.head.fwd));
    gather.push_back(Time{});
    bwd.insert(bwd.begin(), slowed(details.head.bwd));
    gather_back.insert(gather_back.begin(), Time{});
  }
  const Time forward = prefetched_pass(fwd, gather);
  const Time backward = prefetched_pass(bwd, gather_back);
  const auto sum = [](const std::vector<Time>& v) {
    return std::accumulate(v.begin(), v.end(), Time{});
  };
  pipe.stage_forward.push_back(forward);
  pipe.stage_backward.push_back(backward);
  pipe.backward_pieces.push_back(static_cast<int>(n));
  return forward - sum(fwd) + backward - sum(bwd);
}

// Pipeline rank `r`'s gradient buckets: a layer's after the piece of the last backward that
// computed it (under ZeRO-3, of every backward), one at a time on the rank's DP stream (in
// the order added); the embedding's and head's with their stage's last backward. Returns the
// last bucket.
std::optional<PlanTaskId> add_buckets(Plan& plan, const TrainingStepJob& job,
                                      const ModelSpec& model, const StepDetails& details,
                                      const Syncs& syncs, const PipelineTasks& tasks, int r,
                                      ExpandedRanks& expanded, bool first_column) {
  const topo::GpuId gpu = details.representatives[static_cast<std::size_t>(r)];
  if (!first_column && expanded.runs(r, gpu)) {
    return expanded.last_bucket(r);  // the group's buckets, added with the first column
  }
  const int stages = details.stages * job.virtual_stages;
  const std::uint32_t sync_phase = plan.phase(PhaseKind::DpComm, PhasePass::Bwd);
  std::optional<PlanTaskId> prev;
  const auto bucket = [&](PlanTaskId after, const Bucket& b) {
    if (b.time == Time{}) {
      return;
    }
    if (expanded.runs(r, gpu)) {  // the real collectives
      prev = expanded.add_bucket(plan, r, b.key, after, prev);
      return;
    }
    prev = add_dp_hold(plan, gpu, b.time, sync_phase, "gradient sync");
    plan.add_dependency(after, *prev);
  };
  const auto ri = static_cast<std::size_t>(r);
  for (const BackwardTasks& op : tasks.backwards[ri]) {
    const bool last = op.pieces == tasks.last_backward[ri][static_cast<std::size_t>(op.chunk)];
    if (!last && job.zero < 3) {
      continue;
    }
    const int s = op.chunk * details.stages + r;
    const auto first = details.first_layer[static_cast<std::size_t>(s)];
    const auto n = details.layers_per_stage[static_cast<std::size_t>(s)];
    if (s == stages - 1 && last) {
      bucket(op.pieces.front(), syncs.vocab_bucket);  // the head's gradients come first
    }
    for (std::size_t k = 0; k < op.pieces.size(); ++k) {  // backward: the last layer first
      const std::int64_t index = first + n - 1 - static_cast<std::int64_t>(k);
      bucket(op.pieces[k], moe_at(job, model, index) ? syncs.moe_bucket : syncs.dense_bucket);
    }
    if (s == 0 && last) {
      bucket(op.pieces.back(), syncs.vocab_bucket);
    }
  }
  return prev;
}

// The gradient syncs with measurements `m` (one pipeline rank's view).
Syncs syncs_of(const TrainingStepJob& job, const BuildEnv& b, const StepMeasurements& m) {
  const ModelSpec& model = *b.env.model;
  const ParallelSpec& p = b.env.mesh.spec();
  Syncs syncs;
  for (const bool moe : {false, true}) {
    if (moe ? m.sparse : m.dense) {
      (moe ? syncs.moe : syncs.dense) = grad_sync(job, model, p, moe, m);
      Bucket& bucket = moe ? syncs.moe_bucket : syncs.dense_bucket;
      bucket.key = layer_sync_key(job, model, p, moe);
      bucket.time = m.dp_time(bucket.key);
    }
  }
  syncs.vocab_bucket.key = vocab_sync_key(job, model, p);
  syncs.vocab_bucket.time = m.dp_time(syncs.vocab_bucket.key);
  return syncs;
}

// Every pipeline column the step simulates, each the same ops on its own GPUs: the
// representatives', then any more whose activations share perturbed spine links with it; each
// rank's gradient buckets and optimizer after its ops. Ranks whose layer group a perturbed link
// touches run as its real layers and DP collectives (expanded_ranks.hpp).
void add_columns(Plan& plan, const TrainingStepJob& job, const BuildEnv& b, StepDetails& details,
                 PipelineSpec& pipe, const std::vector<StepMeasurements>& views,
                 const std::vector<Syncs>& syncs, const StepMeasurements& healthy) {
  const ModelSpec& model = *b.env.model;
  const StepShape shape = job.shape(b.env);
  const double hbm = b.env.cluster.gpu.hbm_GBps * 1e9 * b.env.cluster.gpu.memory_efficiency;
  const std::vector<topo::GpuId> representatives = details.representatives;
  ExpandedRanks expanded(job, b, details, healthy);
  for (std::size_t c = 0; c <= details.more_columns.size(); ++c) {
    details.representatives = c == 0 ? representatives : details.more_columns[c - 1];
    pipe.gpus = details.representatives;
    pipe.build_op = nullptr;
    if (expanded.any()) {
      pipe.build_op = [&expanded, &pipe](Plan& to, int r, const PipeOp& op, int stage) {
        return expanded.add_op(to, r, pipe.gpus[static_cast<std::size_t>(r)], op, stage);
      };
    }
    const PipelineTasks tasks = add_pipeline(plan, pipe);
    for (int r = 0; r < details.stages; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      const std::optional<PlanTaskId> last_bucket =
          add_buckets(plan, job, model, details, syncs[ri], tasks, r, expanded, c == 0);
      // The optimizer over the rank's shard, memory-bound, after every gradient has arrived;
      // on the rank's slowest GPU.
      add_step_end(plan, details, job, shape, r, tasks.ops[ri].back(), last_bucket,
                   hbm * views[ri].speed[static_cast<std::size_t>(KernelClass::Other)],
                   views[ri]);
    }
  }
  details.representatives = representatives;
  details.op_spans = expanded.spans();
  details.folding += expanded_words(expanded, representatives, details.stages);
}

// 1F1B or interleaved: the pipeline on one GPU per stage, then each rank's buckets and the
// optimizer. Each pipeline rank runs with its own measurements (at_rank): a rank that
// perturbations touch takes its slowest layer group, its own DP collectives, and its slowest
// GPU's speed for the optimizer.
std::vector<Case> pipeline_case(const TrainingStepJob& job, const BuildEnv& b,
                                StepDetails details, const StepMeasurements& healthy) {
  const ParallelSpec& p = b.env.mesh.spec();
  std::vector<StepMeasurements> views;
  std::vector<Syncs> syncs;
  for (int r = 0; r < details.stages; ++r) {
    views.push_back(healthy.at_rank(r));
    syncs.push_back(syncs_of(job, b, views.back()));
  }
  PipelineSpec pipe;
  pipe.schedule = job.schedule;
  pipe.gpus = details.representatives;
  pipe.micro_batches = static_cast<int>(details.micro_batches);
  pipe.chunks = job.virtual_stages;
  pipe.group = job.microbatch_group;
  pipe.source = healthy.source;
  const ModelSpec& model = *b.env.model;
  pipe.activation_bytes = job.transfer_bytes(p, model);
  details.gather_exposed.assign(static_cast<std::size_t>(details.stages), Time{});
  offload_waits(job, model, views.front(), details);
  for (int s = 0; s < details.stages * job.virtual_stages; ++s) {
    const auto r = static_cast<std::size_t>(s % details.stages);
    const Time waited = add_stage_passes(job, model, details, views[r], syncs[r], s, pipe);
    details.gather_exposed[static_cast<std::size_t>(s % details.stages)] +=
        Time::ps(waited.count_ps() * details.micro_batches);
  }
  Plan plan;
  add_columns(plan, job, b, details, pipe, views, syncs, healthy);
  std::vector<Case> out;
  out.push_back(Case{fmt::format("{} {} pp{} x{} m{}", TrainingStepJob::kKind, details.schedule,
                                 p.pp, job.virtual_stages, details.micro_batches),
                     std::move(plan),
                     fmt::format("{}, zero {}", details.schedule, job.zero),
                     {},
                     std::move(details)});
  return out;
}

}  // namespace

std::vector<Case> fold_step(const TrainingStepJob& job, const BuildEnv& b,
                            const StepMeasurements& m) {
  HOPSIM_ASSERT(b.compute != nullptr && b.env.model != nullptr,
                "a training step needs a compute model and a model");
  StepDetails details = base_details(job, b);
  const Syncs syncs = syncs_of(job, b, m);
  for (const bool moe : {false, true}) {
    const std::optional<LayerTiming>& timing = moe ? m.sparse : m.dense;
    if (timing) {
      details.layers.push_back(*timing);
      details.grad_sync.push_back(*(moe ? syncs.moe : syncs.dense));
    }
  }
  details.folding = folding_words(job, b, details) + touched_words(m);
  if (job.schedule == PipeSchedule::DualPipe) {
    return dualpipe_case(job, b, std::move(details), m);
  }
  return pipeline_case(job, b, std::move(details), m);
}

}  // namespace hopsim::work::step_parts
