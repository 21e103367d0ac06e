// What the training step's folded and unfolded plans share (training_step_parts.hpp): a
// layer kind's settings, where a stage's DP groups are, the optimizer's cost, the step's end and
// the details both report.
#include <algorithm>
#include <map>
#include <utility>

#include "sim/assert.hpp"
#include "sim/int_math.hpp"
#include "workloads/step/partial_fold.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work {
namespace {

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

Plan moe_pair_plan(const TrainingStepJob& job, const BuildEnv& b) {
  return one_layer(job.layer, true, Passes::Both).overlapped_pair(b);
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

}  // namespace hopsim::work
