// Experiment checks: each part checks itself, in the order the later parts depend on.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "topology/failures.hpp"
#include "topology/spec_check.hpp"
#include "workloads/experiment/experiment.hpp"
#include "workloads/model/model_check.hpp"
#include "workloads/step/partial_fold.hpp"

namespace hopsim::work {
namespace {

void add_under(const std::string& prefix, const Problems& from, Problems& out) {
  for (const Problem& p : from) {
    out.push_back({prefix + p.path, p.message});
  }
}

void check_validation(const Experiment& e, Problems& out) {
  const Validation& v = *e.validation;
  if (std::holds_alternative<AttentionLayerJob>(e.job) ||
      std::holds_alternative<MoeLayerJob>(e.job) ||
      std::holds_alternative<TransformerLayerJob>(e.job)) {
    if (v.metric != "time_s") {
      out.push_back({"/validation/metric",
                     fmt::format("a layer validates \"time_s\", not \"{}\"", v.metric)});
    }
    if (v.bytes) {
      out.push_back({"/validation/bytes", "only for collectives (it names a row)"});
    }
    return;
  }
  if (std::holds_alternative<TrainingStepJob>(e.job)) {
    if (v.metric != "model_tflops_per_gpu" && v.metric != "tokens_per_s_per_gpu") {
      out.push_back({"/validation/metric",
                     fmt::format("a training step validates \"model_tflops_per_gpu\" or "
                                 "\"tokens_per_s_per_gpu\", not \"{}\"",
                                 v.metric)});
    }
    if (v.bytes) {
      out.push_back({"/validation/bytes", "only for collectives (it names a row)"});
    }
    return;
  }
  const auto* job = std::get_if<CollectiveJob>(&e.job);
  if (job == nullptr) {
    out.push_back({"/validation",
                   "validation applies to workload kinds \"collective\", \"attention_layer\", "
                   "\"moe_layer\", \"transformer_layer\" and \"training_step\""});
    return;
  }
  if (!v.bytes) {
    out.push_back({"/validation", "a collective's validation names its row: bytes"});
  } else if (std::find(job->sizes.begin(), job->sizes.end(), *v.bytes) == job->sizes.end()) {
    out.push_back({"/validation/bytes",
                   fmt::format("{} is not one of the workload's sizes", v.bytes->n)});
  }
}

// The problem when `gpu`'s perturbations of p's part, multiplied up to the i-th (p), leave
// the range one perturbation may take.
std::optional<Problem> out_of_range(const topo::Perturbation& p, std::size_t i, int gpu,
                                    double product) {
  const bool compute = p.part == topo::PerturbedPart::Compute;
  const double lo = compute ? 0.1 : 0.01;
  if (product >= lo && product <= 10) {
    return std::nullopt;
  }
  const std::string what =
      compute ? fmt::format("GPU {} computes", gpu)
              : fmt::format("GPU {}'s {} links carry", gpu,
                            p.part == topo::PerturbedPart::Nic ? "NIC" : "NVLink");
  return Problem{fmt::format("/perturbations/{}/{}", i, compute ? "compute_speed" : "bandwidth"),
                 fmt::format("{} {:.3g} of the rate with the perturbations before this one; "
                             "together they must stay in [{:g}, 10]",
                             what, product, lo)};
}

// One kernel_speed range per GPU (two would multiply draws, which says nothing a single range
// cannot), whose bounds times the GPU's compute_speed (`speed`, its perturbations' product so
// far) stay in [0.1, 10].
std::optional<Problem> kernel_draw_problem(const topo::Perturbation& p, int gpu, double speed,
                                           std::map<int, std::size_t>& drawing) {
  if (!p.kernel_draw) {
    return std::nullopt;
  }
  const std::string at = fmt::format("/perturbations/{}/kernel_speed", p.entry);
  const auto [it, fresh] = drawing.try_emplace(gpu, p.entry);
  if (!fresh && it->second != p.entry) {
    return Problem{at, fmt::format("GPU {} already draws its kernels' speeds "
                                   "(/perturbations/{}); give it one kernel_speed range",
                                   gpu, it->second)};
  }
  const double lo = speed * p.kernel_draw->speed_min;
  const double hi = speed * p.kernel_draw->speed_max;
  if (lo < 0.1 || hi > 10) {
    return Problem{at, fmt::format("at compute_speed {:.3g}, GPU {}'s kernels would run at "
                                   "{:.3g} to {:.3g} of the rate; they must stay in [0.1, 10]",
                                   speed, gpu, lo, hi)};
  }
  return std::nullopt;
}

// Whether a perturbation's GPUs run something: each listed GPU, or one GPU of the nodes or rails
// it names (the rest of a rail may lie beyond the mesh).
// The refusal names the nodes or rails that do run something, at `per_node` GPUs per node.
std::optional<Problem> outside_mesh(const topo::Perturbation& p, int used, int per_node) {
  const bool listed = p.nodes.empty() && p.rails.empty();
  if (used == 0 || listed || std::ranges::any_of(p.gpus, [used](int g) { return g < used; })) {
    return std::nullopt;
  }
  const bool nodes = !p.nodes.empty();
  const int last = nodes ? (used - 1) / per_node : std::min(used, per_node) - 1;
  return Problem{fmt::format("/perturbations/{}/{}", p.entry, nodes ? "nodes" : "rails"),
                 fmt::format("none of its GPUs runs anything here (the parallel mesh uses GPUs 0 "
                             "to {}), so the perturbation would change nothing; name {} {}",
                             used - 1, nodes ? "node" : "rail",
                             last == 0 ? std::string("0") : fmt::format("0 to {}", last))};
}

// A node that two perturbations give another GPU model.
std::optional<Problem> typed_twice(const std::vector<topo::Perturbation>& list) {
  std::map<int, std::size_t> typed;  // node -> the entry that gave it another GPU model
  for (const topo::Perturbation& p : list) {
    for (std::size_t j = 0; p.part == topo::PerturbedPart::GpuType && j < p.nodes.size(); ++j) {
      const auto [it, fresh] = typed.try_emplace(p.nodes[j], p.entry);
      if (!fresh) {
        return Problem{fmt::format("/perturbations/{}/nodes/{}", p.entry, j),
                       fmt::format("node {} already has a GPU model (/perturbations/{})",
                                   p.nodes[j], it->second)};
      }
    }
  }
  return std::nullopt;
}

// Each perturbed GPU exists and runs something (a layer's or a step's GPUs are its mesh's);
// what one GPU's perturbations multiply to stays in one perturbation's range; failed links
// leave a route between every two GPUs.
void check_perturbations(const Experiment& e, Problems& out) {
  const int gpus = e.cluster.gpu_count();
  const int used = mesh_gpus(e);
  std::map<std::pair<int, topo::PerturbedPart>, double> product;
  std::map<int, std::size_t> drawing;  // GPU -> the entry that draws its kernels' speeds
  for (const topo::Perturbation& p : e.cluster.perturbations) {
    const std::size_t i = p.entry;  // a drawn GPU's problems name its draw
    if (const std::optional<Problem> idle = outside_mesh(p, used, e.cluster.gpus_per_node)) {
      out.push_back(*idle);
      return;
    }
    const bool listed = p.nodes.empty() && p.rails.empty();
    for (std::size_t j = 0; j < p.gpus.size(); ++j) {
      const auto at = [&] {
        return p.drawn || !listed ? fmt::format("/perturbations/{}", i)
                                  : fmt::format("/perturbations/{}/gpus/{}", i, j);
      };
      if (p.gpus[j] >= gpus) {
        out.push_back({at(), fmt::format("GPU {} is not in the cluster's {}", p.gpus[j], gpus)});
        return;
      }
      if (listed && used > 0 && p.gpus[j] >= used) {
        out.push_back({at(), fmt::format("GPU {} runs nothing here (the parallel mesh uses GPUs 0 "
                                       "to {}), so the perturbation would change nothing",
                                       p.gpus[j], used - 1)});
        return;
      }
      double& x = product.try_emplace({p.gpus[j], p.part}, 1.0).first->second;
      x *= p.part == topo::PerturbedPart::Compute ? p.compute_speed : p.bandwidth;
      if (const std::optional<Problem> bad = out_of_range(p, i, p.gpus[j], x)) {
        out.push_back(*bad);
        return;
      }
      if (const std::optional<Problem> bad = kernel_draw_problem(p, p.gpus[j], x, drawing)) {
        out.push_back(*bad);
        return;
      }
    }
  }
  if (const std::optional<Problem> twice = typed_twice(e.cluster.perturbations)) {
    out.push_back(*twice);
    return;
  }
  for (const Problem& partition : topo::check_failures(e.cluster)) {
    out.push_back(partition);
    return;
  }
}

// The nvfp4 recipe's GEMMs run on FP4 tensor cores: the cluster's GPU, and every GPU type a
// perturbation puts in, must have them (a stated gpu.peak_fp4_tflops).
void check_fp4(const Experiment& e, Problems& out) {
  if (!fp8_recipe_runs_fp4(e.fp8_recipe)) {
    return;
  }
  const auto lacks = [&](const topo::GpuSpec& gpu, std::string_view where) {
    out.push_back({"/workload/fp8_recipe",
                   fmt::format("\"{}\" runs its GEMMs on FP4 tensor cores, and {} GPU \"{}\" "
                               "has none (no gpu.peak_fp4_tflops: Blackwell GPUs have them); "
                               "use \"mxfp8\" or \"current\", or a Blackwell cluster",
                               fp8_recipe_name(e.fp8_recipe), where, gpu.name)});
  };
  if (e.cluster.gpu.peak_fp4_tflops <= 0) {
    lacks(e.cluster.gpu, "the cluster's");
    return;
  }
  for (const topo::Perturbation& p : e.cluster.perturbations) {
    if (p.part == topo::PerturbedPart::GpuType && p.gpu && p.gpu->peak_fp4_tflops <= 0) {
      lacks(*p.gpu, fmt::format("perturbation {}'s", p.entry));
      return;
    }
  }
}

}  // namespace

JobEnv job_env(const Experiment& e, const Mesh& mesh, const ComputeSpeeds* speeds) {
  return JobEnv{.cluster = e.cluster,
                .nccl = e.nccl,
                .mesh = mesh,
                .model = e.model ? &*e.model : nullptr,
                .seed = e.seed,
                .libraries = &e.ep_libraries,
                .speeds = speeds,
                .fp8_recipe = e.fp8_recipe};
}

int mesh_gpus(const Experiment& e) {
  const bool on_mesh = std::holds_alternative<AttentionLayerJob>(e.job) ||
                       std::holds_alternative<MoeLayerJob>(e.job) ||
                       std::holds_alternative<TransformerLayerJob>(e.job) ||
                       std::holds_alternative<TrainingStepJob>(e.job);
  return on_mesh ? Mesh(e.parallel).size() : 0;
}

Problems check(const Experiment& e) {
  Problems out;
  add_under("/cluster", topo::check_spec(e.cluster), out);
  if (e.model) {
    add_under("/model", check_model(*e.model), out);
  }
  if (!out.empty()) {
    return out;  // the mesh and the job build on a sound cluster and model
  }
  const std::int64_t gpus = std::int64_t{e.cluster.nodes} * e.cluster.gpus_per_node;
  out = Mesh::check(e.parallel, gpus, e.cluster.gpus_per_node);
  if (!out.empty()) {
    return out;
  }
  check_perturbations(e, out);
  check_fp4(e, out);
  if (!out.empty()) {
    return out;
  }
  const Mesh mesh(e.parallel);
  const ComputeSpeeds speeds(e.cluster, e.gpu_types);
  const JobEnv env = job_env(e, mesh, &speeds);
  if (const auto* step = std::get_if<TrainingStepJob>(&e.job)) {
    step_parts::check_partial_fold(*step, env, out);  // what a folded step cannot fold around
    if (!out.empty()) {
      return out;
    }
  }
  std::visit([&](const auto& job) { job.check(env, out); }, e.job);
  if (out.empty() && e.validation) {
    check_validation(e, out);
  }
  return out;
}

Roofline roofline_of(const topo::GpuSpec& gpu) {
  Roofline roofline;
  roofline.peak_bf16_tflops = gpu.peak_bf16_tflops;
  roofline.peak_fp8_tflops = gpu.peak_fp8_tflops;
  roofline.hbm_GBps = gpu.hbm_GBps;
  roofline.peak_fp4_tflops = gpu.peak_fp4_tflops;
  roofline.nvfp4_gemm_ratio = gpu.nvfp4_gemm_ratio;
  roofline.efficiency = gpu.gemm_efficiency;
  roofline.attention_efficiency = gpu.attention_efficiency;
  roofline.fp8_wgrad_ratio = gpu.fp8_wgrad_ratio;
  roofline.memory_efficiency = gpu.memory_efficiency;
  if (gpu.sms > 0) {
    roofline.sm_count = gpu.sms;
  }
  return roofline;
}

ComputeModel compute_model(const Experiment& e) {
  return ComputeModel(e.calibration.get(), roofline_of(e.cluster.gpu), e.calibration_scaling,
                      e.attention_kernel, e.fp8_recipe);
}

}  // namespace hopsim::work
