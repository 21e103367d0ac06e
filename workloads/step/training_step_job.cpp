// The training step: its shape, its checks, and how it builds its case (folded from its probes'
// measurements, or unfolded).
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/assert.hpp"
#include "sim/int_math.hpp"
#include "workloads/costs/bounds.hpp"
#include "workloads/step/schedule_choice.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work {

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
  if (layer.moe) {
    s.fp8_experts = layer.moe->dtypes.experts == Dtype::Fp8;
    s.fp8_shared = layer.moe->dtypes.shared == Dtype::Fp8;
  }
  s.fp8_copy_bytes = fp8_recipe_row(env.fp8_recipe).weight_copies;
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
  const JobEnv layer_env{env.cluster, env.nccl, layer_mesh, env.model, env.seed, env.libraries};
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

namespace {

// The folded step's probes and plan: each layer kind once forward and once backward on the
// layer group (and the DualPipe pair), each DP sync over the GPUs of one stage (streamed rings:
// one flow per rank and channel, for each layer kind's sync and gather, the vocabulary's,
// the norms' and each stage's parameters), and the pipeline on one GPU per stage.
double folded_plan_bytes(const TrainingStepJob& job, const JobEnv& env) {
  const ParallelSpec& p = env.mesh.spec();
  const ModelSpec& m = *env.model;
  const Mesh layer_mesh(TrainingStepJob::layer_spec(p));
  const JobEnv layer_env{env.cluster, env.nccl, layer_mesh, env.model, env.seed, env.libraries};
  double bytes = 0;
  double kinds = 0;
  for (const bool moe : {false, true}) {
    if (moe ? step_parts::has_moe(job, m) : step_parts::has_dense(job, m)) {
      bytes += step_parts::one_layer(job.layer, moe, Passes::Both).estimated_plan_bytes(layer_env);
      kinds += 1;
    }
  }
  if (step_parts::has_moe(job, m) && step_parts::measures_pair(job, p)) {
    // the pair (step_parts::moe_pair_plan): the MoE part's pair and its attention parts
    bytes += 2 * job.layer.moe_part(layer_mesh.spec()).estimated_plan_bytes(layer_env);
    bytes += 2 * job.layer.attention.estimated_plan_bytes(layer_env);
  }
  const double syncs = kinds * (job.zero >= 3 ? 2 : 1) + 2 + d(p.pp);
  const double channels = std::max(1, env.cluster.gpus_per_node);
  bytes += syncs * channels * d(env.mesh.size()) / d(p.pp) * kBytesPerPlanFlow;
  const double pipeline = d(job.micro_batches(p)) * d(trained_layers(m)) * 2 * 8;
  return bytes + pipeline * kBytesPerPlanTask;
}

}  // namespace

double TrainingStepJob::estimated_plan_bytes(const JobEnv& env) const {
  if (env.model == nullptr) {
    return 0;
  }
  if (fold) {
    return folded_plan_bytes(*this, env);
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
