// The folded training step assembled from its measurements, for every schedule: each pipeline
// rank's ops laid on one GPU per stage (pipeline_layout.hpp, measured_ops.hpp), then its
// gradient buckets and the end of its step (step_end.hpp). training_step_job.hpp says how it
// folds; training_step_probes.cpp what it measures.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/assert.hpp"
#include "workloads/step/expanded_ranks.hpp"
#include "workloads/step/measured_ops.hpp"
#include "workloads/step/stage_times.hpp"
#include "workloads/step/step_end.hpp"

namespace hopsim::work::step_parts {
namespace {

std::string folding_words(const TrainingStepJob& job, const BuildEnv& b,
                          const StepDetails& details) {
  const ParallelSpec& p = b.env.mesh.spec();
  const ParallelSpec lp = TrainingStepJob::layer_spec(p);
  const auto sync_stages = static_cast<std::int64_t>(sharing_ranks(job.shape(b.env), 0).size());
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
  return fmt::format(
      "; pipeline rank{} {} run as {} layer group's real layers and DP "
      "collectives (they share the perturbed links)",
      ranks.size() > 1 ? "s" : "", fmt::join(ranks, ", "), ranks.size() > 1 ? "their" : "its");
}

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

// The folded step's DP collectives: each a hold of its measured time on the rank's simulated
// GPU (a bucket, over the stage's DP groups spanning every rank holding it, at the slowest of
// those ranks' measurements), or the expanded rank's real collectives.
class FoldedSyncs final : public SyncSource {
 public:
  FoldedSyncs(const StepShape& shape, const std::vector<StepMeasurements>& views,
              const std::vector<topo::GpuId>& gpus, ExpandedRanks& expanded, double hbm)
      : views_(views), gpus_(gpus), expanded_(expanded), hbm_(hbm) {
    for (int r = 0; r < static_cast<int>(views.size()); ++r) {
      sharers_.push_back(sharing_ranks(shape, r));
    }
  }

  std::optional<PlanTaskId> bucket(Plan& plan, int rank, int /*stage*/, const DpKey& key,
                                   std::span<const PlanTaskId> after) override {
    Time t;
    for (const int q : sharers_[static_cast<std::size_t>(rank)]) {
      t = std::max(t, views_[static_cast<std::size_t>(q)].dp_time(key));
    }
    if (t == Time{}) {
      return std::nullopt;
    }
    if (expanded_.runs(rank, gpu(rank))) {  // the real collectives
      return expanded_.add_bucket(plan, rank, key, after);
    }
    return hold(plan, rank, t, plan.phase(PhaseKind::DpComm, PhasePass::Bwd), "gradient sync",
                after);
  }

  std::optional<PlanTaskId> collective(Plan& plan, int rank, const DpKey& key, PhaseKind kind,
                                       PhasePass pass, std::string_view label,
                                       std::span<const PlanTaskId> after) override {
    const Time t = measured(rank, key);
    if (t == Time{}) {
      return std::nullopt;
    }
    return hold(plan, rank, t, plan.phase(kind, pass), label, after);
  }

  Time measured(int rank, const DpKey& key) const override {
    return views_[static_cast<std::size_t>(rank)].dp_time(key);
  }

  std::vector<topo::GpuId> gpus(int rank) const override { return {gpu(rank)}; }

  double optimizer_bytes_per_s(int rank) const override {
    return hbm_ * views_[static_cast<std::size_t>(rank)]
                      .speed[static_cast<std::size_t>(KernelClass::Other)];
  }

 private:
  topo::GpuId gpu(int rank) const { return gpus_[static_cast<std::size_t>(rank)]; }

  PlanTaskId hold(Plan& plan, int rank, Time t, std::uint32_t phase, std::string_view label,
                  std::span<const PlanTaskId> after) {
    const PlanTaskId id = add_dp_hold(plan, gpu(rank), t, phase, label);
    for (const PlanTaskId a : after) {
      plan.add_dependency(a, id);
    }
    return id;
  }

  std::vector<std::vector<int>> sharers_;  // per rank, sharing_ranks
  const std::vector<StepMeasurements>& views_;
  const std::vector<topo::GpuId>& gpus_;
  ExpandedRanks& expanded_;
  double hbm_;
};

// What the fold assembles from: each rank's view of the measurements and its stages' times.
struct FoldInputs {
  StepShape shape;
  std::vector<StepMeasurements> views;  // per pipeline rank: its own where perturbations touch
  std::vector<Syncs> syncs;
};

// Every pipeline column the step simulates, each the same ops on its own GPUs: the
// representatives', then any more whose activations share perturbed spine links with it; each
// rank's gradient buckets and the end of its step after its ops. Ranks whose layer group a
// perturbed link touches run as its real layers and DP collectives (expanded_ranks.hpp).
Plan add_columns(const TrainingStepJob& job, const BuildEnv& b, StepDetails& details,
                 const FoldInputs& in, const StageTimes& times, const StepMeasurements& healthy) {
  const double hbm = b.env.cluster.gpu.hbm_GBps * 1e9 * b.env.cluster.gpu.memory_efficiency;
  const std::vector<topo::GpuId> representatives = details.representatives;
  const PipeShape shape = pipe_shape(in.shape);
  const PipeOrder order = schedule_order(*job.schedule, shape);
  const int stages = model_stages(in.shape);
  ExpandedRanks expanded(job, b, details, healthy);
  Plan plan;
  for (std::size_t c = 0; c <= details.more_columns.size(); ++c) {
    details.representatives = c == 0 ? representatives : details.more_columns[c - 1];
    MeasuredOps ops(plan, times, details.representatives,
                    job.transfer_bytes(b.env.mesh.spec(), *b.env.model), healthy.source,
                    *job.schedule, expanded.any() ? &expanded : nullptr);
    const LaidPipeline laid = lay_pipeline(plan, order, stages, shape.micro_batches, ops);
    FoldedSyncs syncs(in.shape, in.views, details.representatives, expanded, hbm);
    plan.phase(PhaseKind::DpComm, PhasePass::Bwd);
    std::vector<RankEnd> ends;
    for (int r = 0; r < details.stages; ++r) {
      const topo::GpuId gpu = details.representatives[static_cast<std::size_t>(r)];
      const std::optional<PlanTaskId> last_bucket =
          c > 0 && expanded.runs(r, gpu)
              ? expanded.last_bucket(r)  // the group's buckets, added with the first column
              : add_buckets(plan, syncs, job, in.shape, details, laid, r, job.zero >= 3);
      ends.push_back(add_rank_end(plan, syncs, details, job, in.shape, r,
                                  laid[static_cast<std::size_t>(r)].back().tasks.last(),
                                  last_bucket));
    }
    share_rank_ends(plan, in.shape, ends);
  }
  details.representatives = representatives;
  details.op_spans = expanded.spans();
  details.folding += expanded_words(expanded, representatives, details.stages);
  return plan;
}

// The case's name: "training_step 1f1b pp4 x1 m16" (a schedule of plain ops names its chunks),
// "training_step dualpipe pp16 m32".
std::string case_name(const TrainingStepJob& job, const StepDetails& details) {
  return fmt::format("{} {} pp{}{} m{}", TrainingStepJob::kKind, details.schedule, details.stages,
                     job.schedule->plain_ops() ? fmt::format(" x{}", job.virtual_stages) : "",
                     details.micro_batches);
}

}  // namespace

std::vector<Case> fold_step(const TrainingStepJob& job, const BuildEnv& b,
                            const StepMeasurements& m) {
  HOPSIM_ASSERT(b.compute != nullptr && b.env.model != nullptr,
                "a training step needs a compute model and a model");
  StepDetails details = base_details(job, b);
  FoldInputs in{job.shape(b.env), {}, {}};
  for (int r = 0; r < details.stages; ++r) {
    in.views.push_back(m.at_rank(r));
    in.syncs.push_back(syncs_of(job, b, in.views.back()));
  }
  const Syncs healthy = syncs_of(job, b, m);
  for (const bool moe : {false, true}) {
    if (const std::optional<LayerTiming>& timing = moe ? m.sparse : m.dense) {
      details.layers.push_back(*timing);
      details.grad_sync.push_back(*(moe ? healthy.moe : healthy.dense));
    }
  }
  details.folding = folding_words(job, b, details) + touched_words(m);
  offload_waits(job, *b.env.model, in.views.front(), details);
  const StageTimes times(job, in.shape, details, in.views, in.syncs);
  details.gather_exposed.assign(static_cast<std::size_t>(details.stages), Time{});
  for (int r = 0; r < details.stages; ++r) {
    for (const int s : rank_stages(in.shape, r)) {
      details.gather_exposed[static_cast<std::size_t>(r)] +=
          Time::ps(times.at(r, s).gathers_waited.count_ps() * details.micro_batches);
    }
  }
  details.bubble_closed_form = closed_form_bubble(job, in.shape, times);
  Plan plan = add_columns(job, b, details, in, times, m);
  std::vector<Case> out;
  out.push_back(Case{case_name(job, details),
                     std::move(plan),
                     fmt::format("{}, zero {}", details.schedule, job.zero),
                     {},
                     std::move(details)});
  return out;
}

}  // namespace hopsim::work::step_parts
