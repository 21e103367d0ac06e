// The training step: its checks, and the pieces its folded and unfolded plans share.
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/assert.hpp"
#include "workloads/step/partial_fold.hpp"
#include "workloads/step/schedule_choice.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work {
namespace {

double d(std::int64_t v) {
  return static_cast<double>(v);
}

// The ranks of pipeline ranks `stages` grouped by `key`, each ordered by rank; single members
// left out.
template <class Key>
std::vector<std::vector<topo::GpuId>> stage_groups(const Mesh& mesh,
                                                   std::span<const std::int64_t> stages,
                                                   const Key& key) {
  std::map<std::int64_t, std::vector<topo::GpuId>> by_key;
  for (int r = 0; r < mesh.size(); ++r) {
    if (std::find(stages.begin(), stages.end(), mesh.coordinate(r, Dim::Pp)) != stages.end()) {
      by_key[key(r)].emplace_back(r);
    }
  }
  std::vector<std::vector<topo::GpuId>> out;
  for (auto& [k, g] : by_key) {
    if (g.size() > 1) {
      out.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace

namespace step_parts {

TransformerLayerJob one_layer(const TransformerLayerJob& layer, bool moe, Passes passes,
                              std::int64_t layers) {
  TransformerLayerJob j = layer;
  j.attention.layers = layers;
  j.attention.passes = passes;
  if (!moe) {
    j.moe.reset();
    j.attention.mlp = true;
  }
  return j;
}

bool has_moe(const TrainingStepJob& job, const ModelSpec& m) {
  return m.moe.routed_experts > 0 && job.layer.moe.has_value();
}

bool has_dense(const TrainingStepJob& job, const ModelSpec& m) {
  return !has_moe(job, m) || m.moe.first_dense_layers > 0;
}

bool moe_at(const TrainingStepJob& job, const ModelSpec& m, std::int64_t index) {
  return has_moe(job, m) && is_moe_layer(m, index);
}

namespace {
// What the layer at position `k` of a stage does not run again (timed `t`).
Time not_recomputed(const TrainingStepJob& job, const LayerTiming& t, std::int64_t k) {
  return layer_recomputed(job.recompute, k) ? Time{} : t.recomputed;
}
}  // namespace

Time backward_at(const TrainingStepJob& job, const LayerTiming& t, std::int64_t k) {
  return t.backward - not_recomputed(job, t, k);
}

Time pair_at(const TrainingStepJob& job, const LayerTiming& t, std::int64_t k) {
  return t.pair - not_recomputed(job, t, k);
}

std::vector<std::vector<topo::GpuId>> dense_dp_groups(const Mesh& mesh,
                                                      std::span<const std::int64_t> stages) {
  return stage_groups(mesh, stages, [&](int r) { return mesh.coordinate(r, Dim::Tp); });
}

std::vector<std::vector<topo::GpuId>> expert_dp_groups(const Mesh& mesh,
                                                       std::span<const std::int64_t> stages) {
  return stage_groups(mesh, stages, [&](int r) { return mesh.coordinate(r, Dim::Ep); });
}

OptimizerCost optimizer_cost(const StepShape& s, int rank, double bytes_per_s) {
  const std::vector<StageParams> params = stage_params(s);
  const StageParams shards = dp_shards(s);
  double shard = 0;
  for (const int stage : rank_stages(s, rank)) {
    const StageParams& sp = params[static_cast<std::size_t>(stage)];
    shard += sp.dense / shards.dense + sp.expert / shards.expert;
  }
  // The master weight and both moments read and written, the gradient read, the BF16 weight
  // written.
  const double adam_bytes = 2 * s.optimizer_bytes() + s.grad_bytes + 2;
  return {Time::from_seconds(shard * s.grad_bytes / bytes_per_s),
          Time::from_seconds(shard * adam_bytes / bytes_per_s)};
}

DpKey norm_key() {
  return {CollectiveOp::AllReduce, 4, 0};
}

PlanTaskId add_dp_hold(Plan& plan, topo::GpuId gpu, Time t, std::uint32_t phase,
                       std::string_view label) {
  const PlanTaskId id = plan.add_hold(gpu, t, phase, plan.stream("dp"));
  plan.set_label(id, label);
  return id;
}

DpKey param_gather_key(const TrainingStepJob& job, const StepShape& shape, int rank) {
  if (job.zero < 1) {
    return {};
  }
  const std::vector<StageParams> params = stage_params(shape);
  double dense = 0;
  double expert = 0;
  for (const int s : rank_stages(shape, rank)) {
    if (job.zero >= 3) {
      dense += vocab_params(shape, s);
      continue;
    }
    dense += params[static_cast<std::size_t>(s)].dense;
    expert += params[static_cast<std::size_t>(s)].expert;
  }
  return {CollectiveOp::AllGather, static_cast<std::int64_t>(dense * 2),
          static_cast<std::int64_t>(expert * 2)};
}

void add_step_overhead(Plan& plan, StepDetails& details, const TrainingStepJob& job,
                       topo::GpuId gpu, std::span<const PlanTaskId> after) {
  if (job.step_overhead <= Time{}) {
    return;
  }
  details.step_overhead = job.step_overhead;
  const PlanTaskId id =
      plan.add_delay(gpu, job.step_overhead, plan.phase(PhaseKind::StepOverhead, PhasePass::Step));
  plan.set_label(id, "step overhead");
  for (const PlanTaskId a : after) {
    plan.add_dependency(a, id);
  }
}

// Folded, the pipeline runs on the column of the first GPU whose links are perturbed: its
// activations cross them; beside it, the columns whose activations share perturbed spine links
// with it (partial_fold.hpp).
void place_columns(const TrainingStepJob& job, const JobEnv& env, StepDetails& details) {
  const std::vector<int> columns =
      job.fold ? step_parts::pipeline_columns(job, env) : std::vector<int>{0};
  details.representatives = env.mesh.group(Dim::Pp, columns.front());
  for (std::size_t c = 1; c < columns.size(); ++c) {
    details.more_columns.push_back(env.mesh.group(Dim::Pp, columns[c]));
  }
}

StepDetails base_details(const TrainingStepJob& job, const BuildEnv& b) {
  const ParallelSpec& p = b.env.mesh.spec();
  const ModelSpec& model = *b.env.model;
  const topo::Spec& spec = b.env.cluster;
  const StepShape shape = job.shape(b.env);
  StepDetails details;
  details.stages = static_cast<int>(p.pp);
  details.model_stages = model_stages(shape);
  details.chunks = job.virtual_stages;
  details.group = job.microbatch_group;
  details.micro_batches = job.micro_batches(p);
  details.gpus = b.env.mesh.size();
  details.schedule = std::string(job.schedule->name);
  details.recompute = recompute_label(job.recompute);
  details.zero = job.zero;
  details.layers_per_stage = stage_split(shape);
  details.first_layer = first_layers(details.layers_per_stage);
  for (int r = 0; r < details.stages; ++r) {
    std::int64_t layers = 0;
    std::int64_t moe = 0;
    for (const int s : rank_stages(shape, r)) {
      for (std::int64_t l = 0; l < details.layers_per_stage[static_cast<std::size_t>(s)]; ++l) {
        ++layers;
        moe += moe_at(job, model, details.first_layer[static_cast<std::size_t>(s)] + l) ? 1 : 0;
      }
    }
    details.rank_layers.push_back(layers);
    details.rank_moe_layers.push_back(moe);
  }
  place_columns(job, b.env, details);
  // The output layer on the last stage: its GEMM over every token of the TP group (sequence
  // parallelism gathers them), vocab-parallel over TP, and the loss.
  details.head = output_layer_costs(
      model, job.layer.attention.seq_len * job.layer.attention.micro_batch / p.cp, p.tp,
      job.cross_entropy, *b.compute);
  for (const auto& [name, cost] : details.head.fwd) {
    details.head_forward += cost.time;
  }
  for (const auto& [name, cost] : details.head.bwd) {
    details.head_backward += cost.time;
  }
  for (std::int64_t l = 0; l < job.cpu_offload_layers; ++l) {  // pp 1: the model's first layers
    const double bytes = layer_activation_bytes(shape, moe_at(job, model, l));
    details.offload_copy.push_back(Time::from_seconds(bytes / (b.env.cluster.gpu.host_GBps * 1e9)));
  }
  details.tokens = d(job.global_batch) * d(job.layer.attention.seq_len);
  const AttentionLayerJob& attention = job.layer.attention;
  details.model_flops =
      details.tokens *
      model_flops_per_token(model, attention.seq_len, attention.attended_pairs(b.env.seed));
  details.peak_tflops = spec.gpu.peak_bf16_tflops;
  details.hbm_bytes = spec.gpu.hbm_GB * 1e9;
  details.memory = stage_memory(shape);
  return details;
}

}  // namespace step_parts

ParallelSpec TrainingStepJob::layer_spec(const ParallelSpec& p) {
  ParallelSpec l = p;
  l.pp = 1;
  l.dp = std::lcm(p.tp * p.cp, p.ep) / (p.tp * p.cp);
  return l;
}

StepShape TrainingStepJob::shape(const JobEnv& env) const {
  HOPSIM_ASSERT(env.model != nullptr, "a training step needs a model");
  const ParallelSpec& p = env.mesh.spec();
  StepShape s;
  s.model = env.model;
  s.parallel = p;
  s.seq_len = layer.attention.seq_len;
  s.micro_batch = layer.attention.micro_batch;
  s.micro_batches = micro_batches(p);
  s.schedule = schedule;
  s.chunks = virtual_stages;
  s.group = microbatch_group;
  s.zero = zero;
  s.recompute = recompute;
  s.offload_layers = cpu_offload_layers;
  s.gemm_input_bytes = gemm_input_bytes;
  s.grad_bytes = grad_bytes;
  s.moment_bytes = moment_bytes;
  s.fp8_attention = layer.attention.dtype == Dtype::Fp8;
  s.fp8_mlp = layer.attention.mlp_dtype == Dtype::Fp8;
  s.context_bytes = env.cluster.gpu.context_GB * 1e9;
  s.communicator_bytes = env.cluster.gpu.communicator_GB * 1e9;
  s.stage_layers = stage_layers;
  return s;
}

namespace {

// Said after a model's layer count where it includes MTP blocks.
const char* mtp_words(const ModelSpec& m) {
  return m.mtp_depth > 0 ? " (its MTP blocks included)" : "";
}

// A split set by hand: one entry per model stage, summing to the layers (MTP blocks included).
std::optional<Problem> stage_layers_problem(const TrainingStepJob& job, const ModelSpec& m,
                                            std::int64_t layers, std::int64_t stages) {
  const auto& split = job.stage_layers;
  if (split.empty()) {
    return std::nullopt;
  }
  if (static_cast<std::int64_t>(split.size()) != stages) {
    return Problem{"/workload/stage_layers",
                   fmt::format("{} entries for {} model stages (as schedule {} cuts the model "
                               "over its ranks): one per stage",
                               split.size(), stages, job.schedule->name)};
  }
  const std::int64_t sum = std::accumulate(split.begin(), split.end(), std::int64_t{0});
  if (sum != layers) {
    return Problem{"/workload/stage_layers",
                   fmt::format("the entries sum to {}, but model \"{}\" has {} layers{}", sum,
                               m.name, layers, mtp_words(m))};
  }
  return std::nullopt;
}

// The first problem with how the step splits: its sequences into micro-batches over dp, a
// countable number of micro-batches per pipeline, enough layers for every stage.
std::optional<Problem> split_problem(const TrainingStepJob& job, const StepShape& shape) {
  const ParallelSpec& p = shape.parallel;
  const ModelSpec& m = *shape.model;
  const std::int64_t per_step = p.dp * job.layer.attention.micro_batch;
  if (job.global_batch % per_step != 0) {
    return Problem{"/workload/global_batch",
                   fmt::format("{} sequences do not split into micro-batches of {} over dp {} "
                               "(a multiple of {} is needed)",
                               job.global_batch, job.layer.attention.micro_batch, p.dp, per_step)};
  }
  constexpr std::int64_t kMaxMicroBatches = 100'000;  // a pipeline's ops stay countable
  if (job.micro_batches(p) > kMaxMicroBatches) {
    return Problem{"/workload/global_batch",
                   fmt::format("{} micro-batches per pipeline (global_batch / (dp x "
                               "micro_batch)) is more than the {} a step may have",
                               job.micro_batches(p), kMaxMicroBatches)};
  }
  const std::int64_t stages = model_stages(shape);
  const std::int64_t layers = trained_layers(m);  // with the MTP modules' blocks
  if (layers < stages) {
    return Problem{
        "/parallel/pp",
        fmt::format("{} layers of model \"{}\"{} cannot fill the {} model stages of "
                    "{} over pp {}{}",
                    layers, m.name, mtp_words(m), stages, job.schedule->name, p.pp,
                    job.virtual_stages > 1 ? fmt::format(" x virtual_stages {}", job.virtual_stages)
                                           : std::string())};
  }
  if (const std::optional<Problem> problem = stage_layers_problem(job, m, layers, stages)) {
    return problem;
  }
  const std::vector<std::int64_t> per_stage = stage_split(shape);
  const std::int64_t most = *std::max_element(per_stage.begin(), per_stage.end());
  if (job.recompute.layers > most) {
    return Problem{"/workload/recompute_num_layers",
                   fmt::format("{} layers per recomputation {}: a model stage holds at most {} "
                               "of the {} layers over {} stages",
                               job.recompute.layers,
                               job.recompute.method == RecomputeMethod::Block ? "block" : "group",
                               most, layers, stages)};
  }
  return std::nullopt;
}

// Each layer kind's own checks on the step's layer group; false, with a problem, when the
// layer group does not fit the cluster (then there is nothing to check the layers on).
bool check_layer_group(const TrainingStepJob& job, const JobEnv& env, Problems& out) {
  const ModelSpec& m = *env.model;
  const ParallelSpec lp = TrainingStepJob::layer_spec(env.mesh.spec());
  Problems mesh = Mesh::check(lp, std::int64_t{env.cluster.nodes} * env.cluster.gpus_per_node,
                              env.cluster.gpus_per_node);
  if (!mesh.empty()) {
    out.push_back({"/parallel", fmt::format("a layer group (tp {} x cp {} x {} for ep {}) does "
                                            "not fit the cluster: {}",
                                            lp.tp, lp.cp, lp.dp, lp.ep, mesh.front().message)});
    return false;
  }
  const Mesh layer_mesh(lp);
  const JobEnv layer_env{env.cluster, env.nccl, layer_mesh, env.model, env.seed, env.deepep};
  if (step_parts::has_dense(job, m)) {
    step_parts::one_layer(job.layer, false, Passes::Both).check(layer_env, out);
  }
  if (step_parts::has_moe(job, m)) {
    step_parts::one_layer(job.layer, true, Passes::Both).check(layer_env, out);
  }
  return true;
}

// Settings the step is not simulated under: ZeRO-3 under a schedule that splits backwards or
// pairs ops (its per-layer gathers are priced for whole forwards and backwards).
void check_simulated(const TrainingStepJob& job, Problems& out) {
  if (job.zero >= 3 && !job.schedule->plain_ops()) {
    out.push_back({"/workload/zero",
                   fmt::format("zero 3 is not simulated under {} (its backwards split or pair, "
                               "and ZeRO-3's per-layer gathers are priced for whole passes; "
                               "DeepSeek-V3 trains with ZeRO-1); use zero 1, or 1f1b or "
                               "interleaved",
                               job.schedule->name)});
  }
}

// Activation offload as Megatron allows it: without a pipeline or recomputation, over fewer
// layers than the model has; folded (its waits come from the measured layers).
void check_offload(const TrainingStepJob& job, const ParallelSpec& p, const ModelSpec& m,
                   Problems& out) {
  if (job.cpu_offload_layers == 0) {
    return;
  }
  const std::string path = "/workload/cpu_offload_layers";
  if (p.pp > 1) {
    out.push_back({path, fmt::format("activation offload runs with pp 1 only, as Megatron's "
                                     "--cpu-offloading does (pp is {}); set parallel.pp to 1 "
                                     "or remove it (--set workload.cpu_offload_layers=null)",
                                     p.pp)});
  }
  if (job.recompute.granularity != Recompute::None) {
    out.push_back({path,
                   "activation offload does not combine with recomputation (Megatron "
                   "refuses both); recompute none, or remove it"});
  }
  if (job.cpu_offload_layers >= m.layers) {
    out.push_back({path, fmt::format("{} layers offloaded of the model's {}: it must be fewer "
                                     "(Megatron's --cpu-offloading-num-layers)",
                                     job.cpu_offload_layers, m.layers)});
  }
  if (!job.fold) {
    out.push_back({"/workload/fold", "activation offload is simulated folded only"});
  }
}

// What recomputation could still save: full, or block over more layers.
std::string_view recompute_hint(const RecomputeSpec& r) {
  if (r.granularity != Recompute::Full) {
    return ", or recompute full";
  }
  return r.method == RecomputeMethod::Block ? ", or a larger recompute_num_layers" : "";
}

// A problem when the pipeline rank that needs the most memory per GPU needs more than HBM.
std::optional<Problem> memory_problem(const TrainingStepJob& job, const JobEnv& env) {
  const std::vector<StageMemory> memory = stage_memory(job.shape(env));
  const auto worst = std::max_element(
      memory.begin(), memory.end(),
      [](const StageMemory& a, const StageMemory& b) { return a.total() < b.total(); });
  const double hbm = env.cluster.gpu.hbm_GB * 1e9;
  if (worst->total() <= hbm) {
    return std::nullopt;
  }
  std::string terms = fmt::format(
      "parameters {:.1f}, gradients {:.1f}, optimizer {:.1f}, activations {:.1f} with "
      "recompute {}",
      worst->params / 1e9, worst->grads / 1e9, worst->optimizer / 1e9, worst->activations / 1e9,
      recompute_label(job.recompute));
  for (const auto& [name, bytes] :
       {std::pair{"buffers", worst->buffers}, std::pair{"FP8 weight copies", worst->fp8_weights},
        std::pair{"CUDA and NCCL", worst->reserve}}) {
    if (bytes > 0) {
      terms += fmt::format(", {} {:.1f}", name, bytes / 1e9);
    }
  }
  return Problem{
      "/parallel",
      fmt::format("does not fit in memory: pipeline rank {} needs {:.1f} GB per GPU "
                  "of the {:.1f} GB of HBM ({}); try more pp, tp or cp{}{}",
                  worst - memory.begin(), worst->total() / 1e9, env.cluster.gpu.hbm_GB, terms,
                  job.zero == 0 ? ", zero 1" : "", recompute_hint(job.recompute))};
}

}  // namespace

void TrainingStepJob::check(const JobEnv& env, Problems& out) const {
  if (schedule_auto) {
    // Whatever one candidate's check finds that the others would too is the step's problem;
    // otherwise it runs if any candidate fits.
    std::vector<std::string> reasons;
    for (const TrainingStepJob& candidate : schedule_candidates(*this, env)) {
      Problems problems;
      candidate.check(env, problems);
      if (problems.empty()) {
        return;
      }
      reasons.push_back(fmt::format("{}: {}: {}", schedule_label(candidate), problems.front().path,
                                    problems.front().message));
    }
    out.push_back({"/workload/schedule",
                   fmt::format("no schedule runs this step: {}", fmt::join(reasons, "; "))});
    return;
  }
  const ParallelSpec& p = env.mesh.spec();
  const ModelSpec& m = *env.model;
  if (std::optional<Problem> problem = split_problem(*this, shape(env))) {
    out.push_back(std::move(*problem));
    return;
  }
  for (Problem& problem : check_schedule(*schedule, pipe_shape(p), "/workload/schedule")) {
    out.push_back(std::move(problem));
  }
  if (!check_layer_group(*this, env, out)) {
    return;
  }
  check_simulated(*this, out);
  check_offload(*this, p, m, out);
  if (!out.empty() || env.cluster.gpu.hbm_GB <= 0) {
    return;
  }
  if (std::optional<Problem> problem = memory_problem(*this, env)) {
    out.push_back(std::move(*problem));
  }
}

double TrainingStepJob::estimated_plan_bytes(const JobEnv& env) const {
  if (fold || env.model == nullptr) {
    return 0;
  }
  constexpr double kBytesPerTask = 150;
  const ParallelSpec& p = env.mesh.spec();
  const ModelSpec& m = *env.model;
  // Tasks of one layer's forward and backward on one GPU: the attention builder's estimate
  // (attention_layer_job.cpp) and, for MoE layers, dispatch and combine to every EP peer.
  const double dense = 2 * (16.0 + 3.0 * d(p.cp) + 8.0 * d(p.tp));
  const double moe_share =
      step_parts::has_moe(*this, m) ? d(trained_moe_layers(m)) / d(trained_layers(m)) : 0.0;
  const double per_layer = dense + moe_share * 2 * 4 * (d(p.ep) + 8);
  const double tasks =
      d(env.mesh.size()) * d(micro_batches(p)) * d(trained_layers(m)) / d(p.pp) * per_layer;
  return tasks * kBytesPerTask;
}

std::vector<Case> TrainingStepJob::cases(const BuildEnv& b, const Measured& measured) const {
  std::optional<step_parts::StepMeasurements> m;
  if (fold) {
    m = step_parts::measure_step(*this, b, measured);
  }
  std::vector<Case> out =
      fold ? step_parts::fold_step(*this, b, *m) : step_parts::unfolded_cases(*this, b);
  for (Case& c : out) {
    const StepDetails& d = *step_details(c.details);
    c.throughput = Throughput{d.gpus, d.tokens, d.model_flops, d.peak_tflops};
    if (fold) {
      c.traffic = step_parts::folded_traffic(*this, b, measured, c.plan);
      c.kernels = m->kernels;
      // The head per GPU, on as many GPUs as a layer probe's group: the probes' scale.
      const int group = m->dense ? m->dense->gpus : m->sparse->gpus;
      for (const KernelCosts* pass : {&d.head.fwd, &d.head.bwd}) {
        for (const auto& [name, cost] : *pass) {
          c.kernels->add(cost.kind, group * cost.time);
        }
      }
    }
  }
  return out;
}

}  // namespace hopsim::work
