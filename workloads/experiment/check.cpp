// Experiment checks: each part checks itself, in the order the later parts depend on.
#include <algorithm>

#include <fmt/format.h>

#include "topology/spec_check.hpp"
#include "workloads/experiment/experiment.hpp"
#include "workloads/model/model_check.hpp"

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

// Each perturbed GPU exists; a folded step, which simulates one GPU per pipeline rank (its
// layers measured on the first GPUs), cannot place one.
void check_perturbations(const Experiment& e, Problems& out) {
  const int gpus = e.cluster.nodes * e.cluster.gpus_per_node;
  for (std::size_t i = 0; i < e.cluster.perturbations.size(); ++i) {
    const std::vector<int>& list = e.cluster.perturbations[i].gpus;
    for (std::size_t j = 0; j < list.size(); ++j) {
      if (list[j] >= gpus) {
        out.push_back({fmt::format("/perturbations/{}/gpus/{}", i, j),
                       fmt::format("GPU {} is not in the cluster's {}", list[j], gpus)});
        return;
      }
    }
  }
  const auto* step = std::get_if<TrainingStepJob>(&e.job);
  if (!e.cluster.perturbations.empty() && step != nullptr && step->fold) {
    out.push_back({"/perturbations",
                   "a folded training step simulates one GPU per pipeline rank and cannot place "
                   "a perturbation; unfold it (\"fold\": false in the workload, or --no-fold)"});
  }
}

}  // namespace

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
  if (!out.empty()) {
    return out;
  }
  const Mesh mesh(e.parallel);
  const JobEnv env{e.cluster, e.nccl, mesh, e.model ? &*e.model : nullptr, e.seed, &e.deepep};
  std::visit([&](const auto& job) { job.check(env, out); }, e.job);
  if (out.empty() && e.validation) {
    check_validation(e, out);
  }
  return out;
}

ComputeModel compute_model(const Experiment& e) {
  Roofline roofline;
  roofline.peak_bf16_tflops = e.cluster.gpu.peak_bf16_tflops;
  roofline.peak_fp8_tflops = e.cluster.gpu.peak_fp8_tflops;
  roofline.hbm_GBps = e.cluster.gpu.hbm_GBps;
  roofline.efficiency = e.cluster.gpu.gemm_efficiency;
  roofline.attention_efficiency = e.cluster.gpu.attention_efficiency;
  roofline.fp8_wgrad_ratio = e.cluster.gpu.fp8_wgrad_ratio;
  roofline.memory_efficiency = e.cluster.gpu.memory_efficiency;
  if (e.cluster.gpu.sms > 0) {
    roofline.sm_count = e.cluster.gpu.sms;
  }
  return ComputeModel(e.calibration.get(), roofline, e.calibration_scaling, e.attention_kernel,
                      e.fp8_recipe);
}

}  // namespace hopsim::work
