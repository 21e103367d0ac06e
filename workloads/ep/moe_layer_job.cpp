// The MoE layer's checks and names.
#include "workloads/ep/moe_layer_job.hpp"

#include <utility>

#include <fmt/format.h>

#include "workloads/costs/bounds.hpp"
#include "workloads/costs/layer_check.hpp"
#include "workloads/model/model_check.hpp"
#include "workloads/model/recompute_modules.hpp"

namespace hopsim::work {

namespace {

// Compute per GPU, generously: the layer's active weights over the tokens, attention over a
// full mask, and in the worst case every selection of the group (`n` GPUs) on one GPU's
// experts; forward and backward, seconds at the roofline.
double compute_bound_s(const MoeLayerJob& job, const JobEnv& env, std::size_t n) {
  const ModelSpec& m = *env.model;
  const std::int64_t sms = env.cluster.gpu.sms;
  const auto f = [](std::int64_t v) { return static_cast<double>(v); };
  const double t = f(job.routing.tokens_per_gpu) * (job.overlap == EpOverlap::DualPipePair ? 2 : 1);
  const double flops =
      2 * active_params(m) / f(m.layers) * t * f(static_cast<std::int64_t>(n)) +
      2 * f(m.heads) * 2 * f(m.head_dim + (m.mla ? m.mla_shape.qk_rope_head_dim : 0)) * t * t;
  const topo::GpuSpec& gpu = env.cluster.gpu;
  const double rate = std::min(gpu.peak_bf16_tflops, gpu.peak_fp8_tflops) * 1e12 *
                      std::min(gpu.gemm_efficiency, gpu.attention_efficiency) *
                      (job.comm_sms > 0 ? f(sms - job.comm_sms) / f(sms) : 1.0);
  // Forward and backward, and a recomputed forward.
  return flops * (job.recompute_modules != 0 ? 4 : 3) * f(job.layers) / rate;
}

// Recomputation runs before a backward, and each module has kernels in this layer.
void check_recompute(const MoeLayerJob& job, const ModelSpec& m, Problems& out) {
  const std::uint8_t mods = job.recompute_modules;
  if (mods == 0) {
    return;
  }
  const char* path = "/workload/recompute_modules";
  if (!job.backward()) {
    out.push_back({path,
                   "recomputation runs before a backward: passes \"both\" or "
                   "\"backward\", not \"forward\""});
  }
  if (has_module(mods, RecomputeModule::Mlp)) {
    out.push_back({path,
                   "mlp recomputes a dense layer's MLP, which a MoE layer does not have "
                   "(moe_act: the experts' SwiGLU)"});
  }
  if (has_module(mods, RecomputeModule::Moe)) {
    out.push_back({path,
                   "moe recomputes the whole MoE part, its exchanges too, which a training "
                   "step prices (kind training_step); here: moe_act and shared_experts"});
  }
  if (has_module(mods, RecomputeModule::MlaUpProj) && !m.mla) {
    out.push_back({path, fmt::format("mla_up_proj recomputes MLA's up-projections; model "
                                     "\"{}\" has no MLA",
                                     m.name)});
  }
  if (!job.attention && (has_module(mods, RecomputeModule::CoreAttn) ||
                         has_module(mods, RecomputeModule::MlaUpProj))) {
    out.push_back({path,
                   "core_attn and mla_up_proj recompute the attention part, which this "
                   "layer leaves out (attention false)"});
  }
}

}  // namespace

void MoeLayerJob::check(const JobEnv& env, Problems& out) const {
  if (!check_sizes(env, out)) {
    return;
  }
  const std::vector<topo::GpuId> group = env.mesh.group(Dim::Ep, 0);
  check_settings(env, group, out);
  check_recompute(*this, *env.model, out);
  if (out.empty()) {
    check_bounds(env, group, out);
  }
}

bool MoeLayerJob::check_sizes(const JobEnv& env, Problems& out) const {
  if (!check_model_and_gpu(env, kKind, out)) {
    return false;
  }
  if (env.model->moe.routed_experts == 0) {
    out.push_back(
        {"/workload/kind", fmt::format("model \"{}\" has no routed experts", env.model->name)});
    return false;
  }
  if (routing.tokens_per_gpu * routing.top_k > kMaxExtent) {
    out.push_back({"/workload/tokens_per_gpu",
                   fmt::format("{} tokens x top-{} make expert GEMMs larger than 2^31 rows",
                               routing.tokens_per_gpu, routing.top_k)});
    return false;
  }
  for (const auto& [key, per] :
       {std::pair{"dispatch_bytes_per_element", dispatch_bytes_per_element},
        std::pair{"combine_bytes_per_element", combine_bytes_per_element}}) {
    if (const auto problem = token_bytes_problem(env.model->hidden, per)) {
      out.push_back({fmt::format("/workload/{}", key), *problem});
      return false;
    }
  }
  return true;
}

void MoeLayerJob::check_settings(const JobEnv& env, std::span<const topo::GpuId> group,
                                 Problems& out) const {
  const Problems bad_routing = check_routing(routing, group, env.cluster.gpus_per_node, "/workload",
                                             "/workload/placement", "/workload/routing/counts");
  out.insert(out.end(), bad_routing.begin(), bad_routing.end());
  if (overlap == EpOverlap::DualPipePair && passes != Passes::Both) {
    out.push_back(
        {"/workload/passes", fmt::format("overlap \"dualpipe_pair\" runs a forward chunk against a "
                                         "backward chunk: passes \"both\", not \"{}\"",
                                         passes_name(passes))});
  }
  if (overlap == EpOverlap::TwoMicrobatch && routing.tokens_per_gpu % 2 != 0) {
    out.push_back({"/workload/tokens_per_gpu",
                   fmt::format("{} tokens do not split into {} micro-batches (overlap \"{}\")",
                               routing.tokens_per_gpu, micro_batches(), ep_overlap_name(overlap))});
  }
  const std::int64_t sms = env.cluster.gpu.sms;
  if (comm_sms > 0 && comm_sms >= sms) {
    out.push_back({"/workload/comm_sms",
                   sms == 0 ? std::string("needs the GPU's SM count (cluster gpu.sms)")
                            : fmt::format("{} SMs for communication leave none of the GPU's {} "
                                          "for compute",
                                          comm_sms, sms)});
  }
  const auto n_ep = static_cast<std::int64_t>(group.size());
  if (redundant_experts > 0 && !routing.placement.empty()) {
    out.push_back({"/workload/redundant_experts",
                   "either redundant_experts (copies placed for you) or an explicit placement, "
                   "not both"});
  } else if (redundant_experts % n_ep != 0) {
    out.push_back({"/workload/redundant_experts",
                   fmt::format("{} redundant experts do not spread evenly over the EP group's {} "
                               "GPUs (a multiple of {}: extra slots per GPU)",
                               redundant_experts, n_ep, n_ep)});
  } else if (routing.experts % n_ep == 0) {  // (else check_routing says they do not spread)
    const Problems room = check_redundancy(routing.experts, group.size(), redundant_experts / n_ep,
                                           "/workload/redundant_experts");
    out.insert(out.end(), room.begin(), room.end());
  }
  if (const std::string missing = missing_constants(algorithm, env.ep_libraries());
      !missing.empty()) {
    out.push_back({"/workload/algorithm", missing});
  }
  if (!ep_algorithm_row(algorithm).chunked) {
    for (const auto& [key, set] :
         {std::pair{"chunk_tokens", chunk_tokens > 0}, std::pair{"pieces", pieces.has_value()}}) {
      if (set) {
        out.push_back(
            {fmt::format("/workload/{}", key),
             fmt::format("only for algorithm {}, not \"{}\"", ep_algorithm_list(is_chunked, true),
                         ep_algorithm_name(algorithm))});
      }
    }
  }
}

void MoeLayerJob::check_bounds(const JobEnv& env, std::span<const topo::GpuId> group,
                               Problems& out) const {
  const ModelSpec& m = *env.model;
  const auto f = [](std::int64_t v) { return static_cast<double>(v); };
  const double t = f(routing.tokens_per_gpu) * (overlap == EpOverlap::DualPipePair ? 2 : 1);
  const double seconds = compute_bound_s(*this, env, group.size());
  if (seconds > kMaxComputeSeconds) {
    out.push_back({"/workload/tokens_per_gpu",
                   fmt::format("{} layer(s) of {} tokens per GPU may take ~{:.3g} s of compute "
                               "per GPU (roofline, worst-case routing); at most {:.0e} s are "
                               "simulated",
                               layers, routing.tokens_per_gpu, seconds, kMaxComputeSeconds)});
    return;
  }
  const auto n = static_cast<double>(group.size());
  const double exchanges = 2.0 * (forward() ? 1 : 0) + 2.0 * (backward() ? 1 : 0);
  const double groups = static_cast<double>(env.mesh.size()) / n;
  const double tasks = 2 * exchange_flows(env, group.size(), true) * exchanges * groups *
                       static_cast<double>(layers);
  // Bytes, generously: every token to every GPU of its nodes, in the larger element size.
  const double bytes = t * f(m.hidden) *
                       std::max(dispatch_bytes_per_element, combine_bytes_per_element) *
                       f(std::min(routing.top_k, static_cast<std::int64_t>(group.size()))) *
                       f(env.cluster.gpus_per_node + 1) * n * groups * exchanges * f(layers);
  const PlanLoad load = layer_load(tasks / 2, bytes, seconds, env.cluster, env.nccl);
  if (const auto problem = load_problem(load, env.cluster, "this MoE layer")) {
    out.push_back({"/workload/tokens_per_gpu", *problem});
    return;
  }
  if (tasks > kMaxPlanTasks) {
    out.push_back(
        {"/workload/tokens_per_gpu",
         fmt::format("{} layer(s) of {} tokens per GPU over {} EP group(s) of {} GPUs "
                     "make a plan of up to ~{:.2g} tasks, more than {:.0e}: fewer "
                     "layers, tokens or GPUs, or larger chunk_tokens (or pieces \"streamed\")",
                     layers, routing.tokens_per_gpu, groups, n, tasks, kMaxPlanTasks)});
  }
}

double MoeLayerJob::exchange_flows(const JobEnv& env, std::size_t ranks, bool generous) const {
  // A (source, node) pair's InfiniBand pieces are one per chunk of its tokens: chunk_tokens,
  // or the library's for the EP size (generously, the smallest a library picks, 8).
  const auto n = static_cast<double>(ranks);
  const auto r = static_cast<std::int64_t>(ranks);
  const std::int64_t chunk =
      chunk_tokens > 0 ? chunk_tokens
                       : (generous ? 8 : default_chunk_tokens(algorithm, r, ExchangeOp::Dispatch));
  const double tokens = static_cast<double>(routing.tokens_per_gpu);
  const double pieces_per_pair = chunk > 0 ? tokens / static_cast<double>(chunk) + 1 : 1;
  return ep_algorithm_row(algorithm).flows(
      ExchangeShape{n, static_cast<double>(env.cluster.gpus_per_node), pieces_per_pair,
                    pieces_used() == Pieces::Streamed});
}

double MoeLayerJob::estimated_plan_bytes(const JobEnv& env) const {
  const std::size_t n = env.mesh.group(Dim::Ep, 0).size();
  const auto f = [](std::int64_t v) { return static_cast<double>(v); };
  const double exchanges = 2.0 * (forward() ? 1 : 0) + 2.0 * (backward() ? 1 : 0);
  const double pass_count = (forward() ? 1.0 : 0.0) + (backward() ? 1.0 : 0.0);
  // Layers in plans at once: the probes' 2, 3 and 4 when repeated layers are measured first.
  const double simulated = repeat_layers && layers > kRepeatAbove ? 2 + 3 + 4 : f(layers);
  const double flows = exchange_flows(env, n, false) * exchanges * f(micro_batches()) *
                       f(env.mesh.size()) / static_cast<double>(n);
  // Per GPU, layer and pass: the attention part's and the experts' kernels, about 40 tasks.
  const double compute = 40 * pass_count * f(micro_batches()) * f(env.mesh.size());
  return (flows * kBytesPerPlanFlow + compute * kBytesPerPlanTask) * simulated;
}

std::string_view balancer_name(Balancer b) {
  switch (b) {
    case Balancer::None:
      return "none";
    case Balancer::Bias:
      return "bias";
    case Balancer::AuxLoss:
      return "aux_loss";
  }
  return "?";
}

double aux_uniform_share(double weight) {
  return weight / (weight + 0.01);
}

std::string_view ep_overlap_name(EpOverlap o) {
  switch (o) {
    case EpOverlap::None:
      return "none";
    case EpOverlap::TwoMicrobatch:
      return "two_microbatch";
    case EpOverlap::DualPipePair:
      return "dualpipe_pair";
  }
  return "?";
}

}  // namespace hopsim::work
