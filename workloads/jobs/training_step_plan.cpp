// The training step: checks, and the folded plan (training_step_job.hpp says how it folds).
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
#include "workloads/jobs/training_step_job.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/summary.hpp"

namespace hopsim::work {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// Bytes an optimizer step touches per parameter of its shard: FP32 master weights, Adam's two
// moments (each read and written), the gradient read, the BF16 weights written.
double optimizer_bytes_per_param(double grad_bytes) { return 3 * 4 * 2 + grad_bytes + 2; }

// The transformer layer of one kind, one pass, one layer.
TransformerLayerJob one_layer(const TransformerLayerJob& layer, bool moe, Passes passes) {
  TransformerLayerJob j = layer;
  j.attention.layers = 1;
  j.attention.passes = passes;
  if (!moe) {
    j.moe.reset();
    j.attention.mlp = true;
  }
  return j;
}

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

struct LayerRun {
  Time makespan;
  Summary summary;
  const Plan* plan = nullptr;
};

// The stage's DP groups: ranks of pipeline stage 0 grouped by `key`, each ordered by rank.
std::vector<std::vector<int>> stage_groups(const Mesh& mesh, const auto& key) {
  std::map<std::int64_t, std::vector<int>> by_key;
  for (int r = 0; r < mesh.size(); ++r) {
    if (mesh.coordinate(r, Dim::Pp) == 0) {
      by_key[key(r)].push_back(r);
    }
  }
  std::vector<std::vector<int>> out;
  for (auto& [k, g] : by_key) {
    if (g.size() > 1) {
      out.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace

ParallelSpec TrainingStepJob::layer_spec(const ParallelSpec& p) {
  ParallelSpec l = p;
  l.pp = 1;
  l.dp = std::lcm(p.tp * p.cp, p.ep) / (p.tp * p.cp);
  return l;
}

double TrainingStepJob::attended_pairs(std::uint64_t seed) const {
  const AttentionLayerJob& a = layer.attention;
  const auto causal = [](std::int64_t n) { return d(n) * d(n + 1) / 2; };
  switch (a.mask) {
    case AttentionMask::Full:
      return d(a.seq_len) * d(a.seq_len);
    case AttentionMask::Document: {
      const std::vector<std::int64_t> docs =
          a.documents.empty() ? draw_documents(a.seq_len, a.document_mean_tokens, seed)
                              : a.documents;
      double pairs = 0;
      for (const std::int64_t n : docs) {
        pairs += causal(n);
      }
      return pairs;
    }
    case AttentionMask::Causal:
      break;
  }
  return causal(a.seq_len);
}

StepShape TrainingStepJob::shape(const JobEnv& env) const {
  HOPSIM_ASSERT(env.model != nullptr, "a training step needs a model");
  const ParallelSpec& p = env.mesh.spec();
  return StepShape{env.model,   p,         layer.attention.seq_len, layer.attention.micro_batch,
                   micro_batches(p), schedule, virtual_stages,        zero,
                   recompute,   grad_bytes};
}

void TrainingStepJob::check(const JobEnv& env, Problems& out) const {
  const ParallelSpec& p = env.mesh.spec();
  const ModelSpec& m = *env.model;
  const std::int64_t per_step = p.dp * layer.attention.micro_batch;
  if (global_batch % per_step != 0) {
    out.push_back({"/workload/global_batch",
                   fmt::format("{} sequences do not split into micro-batches of {} over dp {} "
                               "(a multiple of {} is needed)",
                               global_batch, layer.attention.micro_batch, p.dp, per_step)});
    return;
  }
  constexpr std::int64_t kMaxMicroBatches = 100'000;  // a pipeline's ops stay countable
  if (micro_batches(p) > kMaxMicroBatches) {
    out.push_back({"/workload/global_batch",
                   fmt::format("{} micro-batches per pipeline (global_batch / (dp x "
                               "micro_batch)) is more than the {} a step may have",
                               micro_batches(p), kMaxMicroBatches)});
    return;
  }
  const std::int64_t stages = p.pp * virtual_stages;
  if (m.layers < stages) {
    out.push_back({"/parallel/pp",
                   fmt::format("{} layers of model \"{}\" cannot fill pp {} x virtual_stages {} "
                               "= {} stages",
                               m.layers, m.name, p.pp, virtual_stages, stages)});
    return;
  }
  for (Problem& problem :
       check_pipeline(schedule, static_cast<int>(p.pp), static_cast<int>(micro_batches(p)),
                      virtual_stages, "/workload/schedule")) {
    out.push_back(std::move(problem));
  }
  const ParallelSpec lp = layer_spec(p);
  Problems mesh = Mesh::check(lp, std::int64_t{env.cluster.nodes} * env.cluster.gpus_per_node,
                              env.cluster.gpus_per_node);
  if (!mesh.empty()) {
    out.push_back({"/parallel", fmt::format("a layer group (tp {} x cp {} x {} for ep {}) does "
                                            "not fit the cluster: {}",
                                            lp.tp, lp.cp, lp.dp, lp.ep, mesh.front().message)});
    return;
  }
  const Mesh layer_mesh(lp);
  const JobEnv layer_env{env.cluster, env.nccl, layer_mesh, env.model, env.seed, env.deepep};
  const bool has_moe = m.moe.routed_experts > 0 && layer.moe.has_value();
  const bool has_dense = !has_moe || m.moe.first_dense_layers > 0;
  if (has_dense) {
    one_layer(layer, false, Passes::Both).check(layer_env, out);
  }
  if (has_moe) {
    one_layer(layer, true, Passes::Both).check(layer_env, out);
  }
  if (!out.empty() || env.cluster.gpu.hbm_GB <= 0) {
    return;
  }
  const std::vector<StageMemory> memory = stage_memory(shape(env));
  const auto worst = std::max_element(
      memory.begin(), memory.end(),
      [](const StageMemory& a, const StageMemory& b) { return a.total() < b.total(); });
  const double hbm = env.cluster.gpu.hbm_GB * 1e9;
  if (worst->total() > hbm) {
    out.push_back(
        {"/parallel",
         fmt::format("does not fit in memory: pipeline rank {} needs {:.1f} GB per GPU of the "
                     "{:.0f} GB of HBM (parameters {:.1f}, gradients {:.1f}, optimizer {:.1f}, "
                     "activations {:.1f} with recompute {}, buffers {:.1f}); try more pp, tp or "
                     "cp{}{}",
                     worst - memory.begin(), worst->total() / 1e9, env.cluster.gpu.hbm_GB,
                     worst->params / 1e9, worst->grads / 1e9, worst->optimizer / 1e9,
                     worst->activations / 1e9, recompute_name(recompute), worst->buffers / 1e9,
                     zero == 0 ? ", zero 1" : "",
                     recompute == Recompute::Full ? "" : ", or recompute full")});
  }
}

std::vector<Case> TrainingStepJob::cases(const BuildEnv& b) const {
  HOPSIM_ASSERT(b.compute != nullptr && b.env.model != nullptr,
                "a training step needs a compute model and a model");
  const ParallelSpec& p = b.env.mesh.spec();
  const ModelSpec& model = *b.env.model;
  const topo::Spec& spec = b.env.cluster;
  const StepShape step_shape = shape(b.env);
  StepDetails details;
  details.stages = static_cast<int>(p.pp);
  details.chunks = virtual_stages;
  details.micro_batches = micro_batches(p);
  details.gpus = b.env.mesh.size();
  details.schedule = std::string(pipe_schedule_name(schedule));
  details.recompute = std::string(recompute_name(recompute));
  details.zero = zero;
  const int stages = details.stages * virtual_stages;
  details.layers_per_stage = layers_per_stage(model.layers, stages);

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
      const Outcome o = simulate(b.cluster, c.front().plan);
      const Summary s = summarize(b.cluster, c.front().plan, o);
      (passes == Passes::Forward ? t.forward : t.backward) = o.makespan;
      for (const Source src : kSources) {
        sources.add(src, s.compute_sources.time(src));
      }
      for (std::size_t ph = 0; ph < s.phases.size(); ++ph) {
        exposed[comm_kind(c.front().plan.phases()[ph].name)] += s.phases[ph].exposed;
      }
    }
    if (recompute == Recompute::Full) {
      t.backward += t.forward;  // the forward runs again before the backward
    }
    for (auto& [kind, time] : exposed) {
      if (time > Time{}) {
        t.exposed.emplace_back(kind, time);
      }
    }
    return t;
  };
  const bool has_moe = model.moe.routed_experts > 0 && layer.moe.has_value();
  const bool has_dense = !has_moe || model.moe.first_dense_layers > 0;
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

  // The output layer on the last stage: its GEMM over every token of the TP group (sequence
  // parallelism gathers them), vocab-parallel over TP.
  const std::int64_t head_tokens = layer.attention.seq_len * layer.attention.micro_batch / p.cp;
  const std::int64_t vocab_share = (model.vocab + p.tp - 1) / p.tp;
  details.head_forward =
      b.compute->gemm(Dtype::Bf16, head_tokens, vocab_share, model.hidden, Pass::Fwd).time;
  details.head_backward =
      b.compute->gemm(Dtype::Bf16, head_tokens, vocab_share, model.hidden, Pass::Bwd).time;

  // 2. Gradient synchronization of one layer of each kind (and of the embedding and head),
  // over every DP group of stage 0 at once.
  const std::vector<std::vector<int>> dense_groups = stage_groups(
      b.env.mesh, [&](int r) { return b.env.mesh.coordinate(r, Dim::Tp); });
  const std::vector<std::vector<int>> expert_groups = stage_groups(
      b.env.mesh, [&](int r) { return b.env.mesh.coordinate(r, Dim::Ep); });
  CollectiveJob sync_job;
  sync_job.op = zero >= 1 ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
  sync_job.algorithm = CollectiveAlgorithm::Auto;
  sync_job.auto_protocol = true;
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
    const Time t = plan.tasks().empty() ? Time{} : simulate(b.cluster, plan).makespan;
    dp_cache.emplace(key, t);
    return t;
  };
  const auto sync_time = [&](double dense_params, double expert_params) {
    return dp_time(sync_job.op, static_cast<std::int64_t>(dense_params * grad_bytes),
                   static_cast<std::int64_t>(expert_params * grad_bytes));
  };
  const LayerParams dense_params = layer_params(model, false);
  const LayerParams moe_params = layer_params(model, true);
  const auto layer_sync = [&](bool moe) {
    GradSync g;
    g.moe = moe;
    const double shared = moe ? (moe_params.attention + moe_params.norms + moe_params.router +
                                 moe_params.shared_experts) /
                                    d(p.tp)
                              : (dense_params.attention + dense_params.mlp + dense_params.norms) /
                                    d(p.tp);
    const double experts = moe ? d(model.moe.routed_experts) * moe_params.expert / d(p.ep) : 0;
    g.time = sync_time(shared, experts);
    g.bytes_per_gpu = (shared + experts) * grad_bytes;
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
  const double vocab_params = d(model.vocab) * d(model.hidden) / d(p.tp);
  const Time vocab_sync = sync_time(vocab_params, 0);

  // 3. The pipeline on one GPU per stage.
  Plan plan;
  PipelineSpec pipe;
  pipe.schedule = schedule;
  pipe.gpus = b.env.mesh.group(Dim::Pp, 0);
  details.representatives = pipe.gpus;
  pipe.micro_batches = static_cast<int>(details.micro_batches);
  pipe.chunks = virtual_stages;
  pipe.source = source;
  pipe.activation_bytes = Bytes{layer.attention.seq_len * layer.attention.micro_batch *
                                model.hidden * 2 / (p.tp * p.cp)};
  std::vector<std::int64_t> first_layer(static_cast<std::size_t>(stages), 0);
  for (int s = 1; s < stages; ++s) {
    first_layer[static_cast<std::size_t>(s)] =
        first_layer[static_cast<std::size_t>(s - 1)] +
        details.layers_per_stage[static_cast<std::size_t>(s - 1)];
  }
  details.rank_layers.assign(static_cast<std::size_t>(details.stages), 0);
  details.rank_moe_layers.assign(static_cast<std::size_t>(details.stages), 0);
  const auto is_moe = [&](std::int64_t index) { return has_moe && is_moe_layer(model, index); };
  for (int s = 0; s < stages; ++s) {
    Time fwd;
    Time bwd;
    const auto n = details.layers_per_stage[static_cast<std::size_t>(s)];
    for (std::int64_t l = 0; l < n; ++l) {
      const LayerTiming& t = is_moe(first_layer[static_cast<std::size_t>(s)] + l) ? *sparse : *dense;
      fwd += t.forward;
      bwd += t.backward;
      details.rank_moe_layers[static_cast<std::size_t>(s % details.stages)] += t.moe ? 1 : 0;
    }
    if (s == stages - 1) {
      fwd += details.head_forward;
      bwd += details.head_backward;
    }
    details.rank_layers[static_cast<std::size_t>(s % details.stages)] += n;
    pipe.stage_forward.push_back(fwd);
    pipe.stage_backward.push_back(bwd);
    pipe.backward_pieces.push_back(static_cast<int>(n));
  }
  const PipelineTasks tasks = add_pipeline(plan, pipe);

  // Gradient buckets: a layer's after the piece of the last backward that computed it, one at
  // a time on the rank's DP stream; the embedding's and head's with their stage's.
  const std::uint32_t sync_phase = plan.phase("dp_comm", "bwd");
  const std::uint32_t optimizer_phase = plan.phase("optimizer", "step");
  const std::uint32_t gather_phase = plan.phase("param_gather", "step");
  const std::vector<StageParams> params = stage_params(step_shape);
  const double dense_shard = zero >= 1 ? d(p.dp * p.cp) : 1;
  const double expert_shard = zero >= 1 ? d(p.tp * p.cp * p.dp) / d(p.ep) : 1;
  const double hbm = spec.gpu.hbm_GBps * 1e9;
  for (int r = 0; r < details.stages; ++r) {
    const int gpu = pipe.gpus[static_cast<std::size_t>(r)];
    const auto& last = tasks.last_backward[static_cast<std::size_t>(r)];
    // Chunks in the order their last backward ends on this rank.
    std::vector<int> chunk_order(static_cast<std::size_t>(virtual_stages));
    std::iota(chunk_order.begin(), chunk_order.end(), 0);
    std::sort(chunk_order.begin(), chunk_order.end(), [&](int a, int c) {
      return last[static_cast<std::size_t>(a)].back() < last[static_cast<std::size_t>(c)].back();
    });
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
    double dense_local = 0;
    double expert_local = 0;
    for (const int c : chunk_order) {
      const int s = c * details.stages + r;
      const std::vector<PlanTaskId>& pieces = last[static_cast<std::size_t>(c)];
      const auto n = details.layers_per_stage[static_cast<std::size_t>(s)];
      if (s == stages - 1) {
        bucket(pieces.front(), vocab_sync);  // the head's gradients come first
      }
      for (std::size_t k = 0; k < pieces.size(); ++k) {  // backward: the last layer first
        const std::int64_t index = first_layer[static_cast<std::size_t>(s)] + n - 1 -
                                   static_cast<std::int64_t>(k);
        bucket(pieces[k], is_moe(index) ? moe_sync->time : dense_sync->time);
      }
      if (s == 0) {
        bucket(pieces.back(), vocab_sync);
      }
      dense_local += params[static_cast<std::size_t>(s)].dense;
      expert_local += params[static_cast<std::size_t>(s)].expert;
    }
    // The optimizer over the rank's shard, memory-bound, after every gradient has arrived.
    const double shard = dense_local / dense_shard + expert_local / expert_shard;
    const Time opt = Time::from_seconds(shard * optimizer_bytes_per_param(grad_bytes) / hbm);
    const PlanTaskId optimizer = plan.add_compute(
        ComputeTask{gpu, opt, Flops{}, Source::Roofline, optimizer_phase, kComputeStream,
                    "optimizer"});
    plan.add_dependency(tasks.ops[static_cast<std::size_t>(r)].back(), optimizer);
    if (prev) {
      plan.add_dependency(*prev, optimizer);
    }
    // ZeRO-1: every DP rank gathers the others' updated shards.
    if (zero >= 1) {
      const Time t = dp_time(CollectiveOp::AllGather, static_cast<std::int64_t>(dense_local * 2),
                             static_cast<std::int64_t>(expert_local * 2));
      if (t > Time{}) {
        details.param_gather = std::max(details.param_gather, t);
        const PlanTaskId id = plan.add_delay(gpu, t, gather_phase);
        plan.set_label(id, "parameter all-gather");
        plan.add_dependency(optimizer, id);
      }
    }
  }

  details.tokens = d(global_batch) * d(layer.attention.seq_len);
  details.model_flops = details.tokens * model_flops_per_token(model, layer.attention.seq_len,
                                                               attended_pairs(b.env.seed));
  details.peak_tflops = spec.gpu.peak_bf16_tflops;
  details.hbm_bytes = spec.gpu.hbm_GB * 1e9;
  details.memory = stage_memory(step_shape);
  details.folding = fmt::format(
      "{} GPUs folded: each layer kind simulated on one {}-GPU layer group (tp {} x cp {}{}), "
      "one layer's gradient sync on one stage's {} GPUs, the pipeline on one GPU per stage "
      "({})",
      details.gpus, layer_mesh.size(), p.tp, p.cp,
      lp.dp > 1 ? fmt::format(" x {} for ep {}", lp.dp, p.ep) : std::string(),
      b.env.mesh.size() / p.pp, p.pp);
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
