// The folded training step (training_step_job.hpp says how it folds).
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/jobs/collective_job.hpp"
#include "workloads/jobs/training_step_parts.hpp"
#include "workloads/pipeline/param_prefetch.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/summary.hpp"

namespace hopsim::work {
namespace {

using step_parts::one_layer;

// What kind of communication a layer phase's exposed time is.
std::string comm_kind(const std::string& phase) {
  if (phase == "tp_comm") {
    return "tp";
  }
  if (phase == "dispatch" || phase == "combine") {
    return "ep";
  }
  if (phase == "attention") {
    return "cp";
  }
  return "other";
}

// Phases whose compute is GEMMs (their weight gradients are the backward's weight part).
bool is_gemm_phase(const std::string& phase) {
  return phase == "projections" || phase == "mlp" || phase == "experts" ||
         phase == "shared_experts";
}

}  // namespace

Time TrainingStepJob::dualpipe_pair(const BuildEnv& b, const BuildEnv& layer_build) const {
  // The MoE layer kind's DualPipe pair: one layer's forward (attention, router, dispatch,
  // experts, combine) of one micro-batch against its backward of another, each exchange under
  // the other's compute.
  MoeLayerJob pair = layer.moe_part(layer_build.env.mesh.spec());
  pair.attention = true;
  pair.overlap = EpOverlap::DualPipePair;
  pair.passes = Passes::Both;
  pair.layers = 1;
  std::vector<Case> c = pair.cases(layer_build);
  return simulate(b.cluster, c.front().plan, {.tolerance = b.env.tolerance}).makespan;
}

std::vector<Case> TrainingStepJob::folded_cases(const BuildEnv& b) const {
  HOPSIM_ASSERT(b.compute != nullptr && b.env.model != nullptr,
                "a training step needs a compute model and a model");
  const ParallelSpec& p = b.env.mesh.spec();
  const ModelSpec& model = *b.env.model;
  const topo::Spec& spec = b.env.cluster;
  const StepShape step_shape = shape(b.env);
  StepDetails details = step_parts::base_details(*this, b);
  const int stages = details.stages * virtual_stages;

  // 1. Each layer kind, forward and backward, on one layer group.
  const ParallelSpec lp = layer_spec(p);
  const Mesh layer_mesh(lp);
  const JobEnv layer_env{spec, b.env.nccl, layer_mesh, b.env.model, b.env.seed, b.env.deepep};
  const BuildEnv layer_build{layer_env, b.cluster, b.compute};
  ComputeTally sources;
  const auto time_layer = [&](bool moe) {
    LayerTiming t;
    t.moe = moe;
    t.gpus = layer_mesh.size();
    std::map<std::string, Time> exposed;
    for (const Passes passes : {Passes::Forward, Passes::Backward}) {
      std::vector<Case> c = one_layer(layer, moe, passes).cases(layer_build);
      const Outcome o = simulate(b.cluster, c.front().plan, {.tolerance = b.env.tolerance});
      const Summary s = summarize(b.cluster, c.front().plan, o);
      (passes == Passes::Forward ? t.forward : t.backward) = o.makespan;
      const RankTime& busiest = s.ranks[static_cast<std::size_t>(s.critical_rank)];
      t.compute += busiest.compute;
      t.comm += busiest.comm;
      for (const Source src : kSources) {
        sources.add(src, s.compute_sources.time(src));
      }
      for (std::size_t ph = 0; ph < s.phases.size(); ++ph) {
        const std::string& name = c.front().plan.phases()[ph].name;
        exposed[comm_kind(name)] += s.phases[ph].exposed;
        if (passes == Passes::Forward && is_gemm_phase(name)) {
          t.weight += s.phases[ph].compute;
        }
      }
    }
    if (recompute == Recompute::Full) {
      t.backward += t.forward;  // the forward runs again before the backward
    }
    t.pair = t.forward + t.backward;
    if (moe && schedule == PipeSchedule::DualPipe && p.cp == 1 && p.tp == 1) {
      // The simulated pair has no recomputation: under full recompute the backward half
      // first runs the forward again, not overlapped.
      const Time again = recompute == Recompute::Full ? t.forward : Time{};
      t.pair = std::min(t.pair, dualpipe_pair(b, layer_build) + again);
    }
    for (auto& [kind, time] : exposed) {
      if (time > Time{}) {
        t.exposed.emplace_back(kind, time);
      }
    }
    return t;
  };
  const bool has_moe = step_parts::has_moe(*this, model);
  const bool has_dense = step_parts::has_dense(*this, model);
  std::optional<LayerTiming> dense;
  std::optional<LayerTiming> sparse;
  if (has_dense) {
    dense = time_layer(false);
    details.layers.push_back(*dense);
  }
  if (has_moe) {
    sparse = time_layer(true);
    details.layers.push_back(*sparse);
  }
  Source source = Source::Exact;
  for (const Source src : kSources) {
    if (sources.time(src) > sources.time(source)) {
      source = src;
    }
  }

  // 2. Gradient synchronization of one layer of each kind (and of the embedding and head),
  // over every DP group of stage 0 at once.
  // DualPipe holds every stage on two pipeline ranks (0 and p - 1 for stage 0): both copies'
  // gradients reduce together.
  std::vector<std::int64_t> sync_stages{0};
  if (schedule == PipeSchedule::DualPipe) {
    sync_stages.push_back(p.pp - 1);
  }
  const std::vector<std::vector<int>> dense_groups =
      step_parts::dense_dp_groups(b.env.mesh, sync_stages);
  const std::vector<std::vector<int>> expert_groups =
      step_parts::expert_dp_groups(b.env.mesh, sync_stages);
  CollectiveJob sync_job;
  sync_job.op = zero >= 1 ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  sync_job.algorithm = CollectiveAlgorithm::Auto;
  sync_job.auto_protocol = true;
  sync_job.streamed_rings = true;  // O(dp) flows: DP groups of thousands of ranks
  // One collective over the stage's DP groups (dense bytes) and expert-DP groups (expert
  // bytes) at once; stages and layers of one size share the simulation.
  std::map<std::tuple<CollectiveOp, std::int64_t, std::int64_t>, Time> dp_cache;
  const auto dp_time = [&](CollectiveOp op, std::int64_t dense_bytes, std::int64_t expert_bytes) {
    const auto key = std::tuple{op, dense_bytes, expert_bytes};
    if (const auto it = dp_cache.find(key); it != dp_cache.end()) {
      return it->second;
    }
    CollectiveJob job = sync_job;
    job.op = op;
    Plan plan;
    if (dense_bytes > 0) {
      add_collectives(plan, b, job, dense_groups, Bytes{dense_bytes});
    }
    if (expert_bytes > 0) {
      add_collectives(plan, b, job, expert_groups, Bytes{expert_bytes});
    }
    const Time t = plan.tasks().empty()
                       ? Time{}
                       : simulate(b.cluster, plan, {.tolerance = b.env.tolerance}).makespan;
    dp_cache.emplace(key, t);
    return t;
  };
  const auto sync_time = [&](double dense_params, double expert_params) {
    return dp_time(sync_job.op, static_cast<std::int64_t>(dense_params * grad_bytes),
                   static_cast<std::int64_t>(expert_params * grad_bytes));
  };
  const auto layer_sync = [&](bool moe) {
    GradSync g;
    g.moe = moe;
    const StageParams params = layer_params_per_gpu(model, p, moe);
    g.time = sync_time(params.dense, params.expert);
    g.bytes_per_gpu = (params.dense + params.expert) * grad_bytes;
    if (zero >= 3) {
      g.gather = dp_time(CollectiveOp::AllGather, static_cast<std::int64_t>(params.dense * 2),
                         static_cast<std::int64_t>(params.expert * 2));
    }
    return g;
  };
  std::optional<GradSync> dense_sync;
  std::optional<GradSync> moe_sync;
  if (has_dense) {
    dense_sync = layer_sync(false);
    details.grad_sync.push_back(*dense_sync);
  }
  if (has_moe) {
    moe_sync = layer_sync(true);
    details.grad_sync.push_back(*moe_sync);
  }
  const double vocab_params =
      static_cast<double>(model.vocab) * static_cast<double>(model.hidden) / static_cast<double>(p.tp);
  const Time vocab_sync = sync_time(vocab_params, 0);

  details.folding = fmt::format(
      "{} GPUs folded: each layer kind simulated on one {}-GPU layer group (tp {} x cp {}{}), "
      "one layer's gradient sync on one stage's {} GPUs, the pipeline on one GPU per stage "
      "({})",
      details.gpus, layer_mesh.size(), p.tp, p.cp,
      lp.dp > 1 ? fmt::format(" x {} for ep {}", lp.dp, p.ep) : std::string(),
      b.env.mesh.size() / p.pp * static_cast<std::int64_t>(sync_stages.size()), p.pp);
  if (schedule == PipeSchedule::DualPipe) {
    return step_parts::dualpipe_case(*this, b, std::move(details), dense, sparse, dense_sync,
                                     moe_sync, vocab_sync, source, dp_time);
  }

  // 3. The pipeline on one GPU per stage.
  Plan plan;
  PipelineSpec pipe;
  pipe.schedule = schedule;
  pipe.gpus = details.representatives;
  pipe.micro_batches = static_cast<int>(details.micro_batches);
  pipe.chunks = virtual_stages;
  pipe.source = source;
  pipe.activation_bytes = transfer_bytes(p, model);
  const std::vector<std::int64_t>& first_layer = details.first_layer;
  const auto is_moe = [&](std::int64_t index) { return step_parts::moe_at(*this, model, index); };
  // A stage's forward and backward: its layers in order (the head last), and back (the head
  // first); under ZeRO-3 each layer waits for its parameters' gather, prefetched.
  details.gather_exposed.assign(static_cast<std::size_t>(details.stages), Time{});
  for (int s = 0; s < stages; ++s) {
    // In a backward, a layer's gather shares the DP links with the reduce-scatters of the
    // layers that computed before it: each gather is charged with one layer's reduce-scatter,
    // its own layer's (the same size, except where dense and MoE layers meet).
    std::vector<Time> fwd;
    std::vector<Time> bwd;
    std::vector<Time> gather;
    std::vector<Time> gather_back;
    const auto n = details.layers_per_stage[static_cast<std::size_t>(s)];
    for (std::int64_t l = 0; l < n; ++l) {
      const bool moe = is_moe(first_layer[static_cast<std::size_t>(s)] + l);
      const LayerTiming& t = moe ? *sparse : *dense;
      const GradSync& sync = *(moe ? moe_sync : dense_sync);
      fwd.push_back(t.forward);
      bwd.insert(bwd.begin(), t.backward);
      gather.push_back(zero >= 3 ? sync.gather : Time{});
      gather_back.insert(gather_back.begin(), zero >= 3 ? sync.gather + sync.time : Time{});
    }
    if (s == stages - 1) {
      fwd.push_back(details.head_forward);
      gather.push_back(Time{});
      bwd.insert(bwd.begin(), details.head_backward);
      gather_back.insert(gather_back.begin(), Time{});
    }
    const Time forward = prefetched_pass(fwd, gather);
    const Time backward = prefetched_pass(bwd, gather_back);
    const auto sum = [](const std::vector<Time>& v) {
      return std::accumulate(v.begin(), v.end(), Time{});
    };
    details.gather_exposed[static_cast<std::size_t>(s % details.stages)] +=
        Time::ps((forward - sum(fwd) + backward - sum(bwd)).count_ps() * details.micro_batches);
    pipe.stage_forward.push_back(forward);
    pipe.stage_backward.push_back(backward);
    pipe.backward_pieces.push_back(static_cast<int>(n));
  }
  const PipelineTasks tasks = add_pipeline(plan, pipe);

  // Gradient buckets: a layer's after the piece of the last backward that computed it (under
  // ZeRO-3, of every backward), one at a time on the rank's DP stream; the embedding's and
  // head's with their stage's last backward.
  const std::uint32_t sync_phase = plan.phase("dp_comm", "bwd");
  for (int r = 0; r < details.stages; ++r) {
    const int gpu = pipe.gpus[static_cast<std::size_t>(r)];
    std::optional<PlanTaskId> prev;
    const auto bucket = [&](PlanTaskId after, Time t) {
      if (t == Time{}) {
        return;
      }
      const PlanTaskId id = plan.add_delay(gpu, t, sync_phase);
      plan.set_label(id, "gradient sync");
      plan.add_dependency(after, id);
      if (prev) {
        plan.add_dependency(*prev, id);
      }
      prev = id;
    };
    for (const BackwardTasks& op : tasks.backwards[static_cast<std::size_t>(r)]) {
      const bool last = op.pieces == tasks.last_backward[static_cast<std::size_t>(r)]
                                                        [static_cast<std::size_t>(op.chunk)];
      if (!last && zero < 3) {
        continue;
      }
      const int s = op.chunk * details.stages + r;
      const std::vector<PlanTaskId>& pieces = op.pieces;
      const auto n = details.layers_per_stage[static_cast<std::size_t>(s)];
      if (s == stages - 1 && last) {
        bucket(pieces.front(), vocab_sync);  // the head's gradients come first
      }
      for (std::size_t k = 0; k < pieces.size(); ++k) {  // backward: the last layer first
        const std::int64_t index = first_layer[static_cast<std::size_t>(s)] + n - 1 -
                                   static_cast<std::int64_t>(k);
        bucket(pieces[k], is_moe(index) ? moe_sync->time : dense_sync->time);
      }
      if (s == 0 && last) {
        bucket(pieces.back(), vocab_sync);
      }
    }
    // The optimizer over the rank's shard, memory-bound, after every gradient has arrived.
    step_parts::add_step_end(plan, details, *this, step_shape, r,
                             tasks.ops[static_cast<std::size_t>(r)].back(), prev,
                             spec.gpu.hbm_GBps * 1e9, dp_time);
  }

  std::vector<Case> out;
  out.push_back(Case{fmt::format("{} {} pp{} x{} m{}", kKind, details.schedule, p.pp,
                                 virtual_stages, details.micro_batches),
                     std::move(plan),
                     fmt::format("{}, zero {}", details.schedule, zero),
                     {},
                     {},
                     {},
                     std::move(details)});
  return out;
}

}  // namespace hopsim::work
