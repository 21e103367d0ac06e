// Other GPU models of a mixed cluster, priced by their own tables (gpu_types.hpp).
#include "workloads/experiment/gpu_types.hpp"

#include <variant>

#include "sim/assert.hpp"
#include "workloads/compute/gpu_type_speed.hpp"
#include "workloads/costs/output_layer.hpp"
#include "workloads/cp/attention_closed_forms.hpp"
#include "workloads/ep/moe_closed_forms.hpp"

namespace hopsim::work {
namespace {

void append(LayerCosts& to, const LayerCosts& more) {
  to.fwd.insert(to.fwd.end(), more.fwd.begin(), more.fwd.end());
  to.bwd.insert(to.bwd.end(), more.bwd.begin(), more.bwd.end());
}

LayerCosts transformer_kernels(const Experiment& e, const TransformerLayerJob& job,
                               const ComputeModel& model) {
  LayerCosts out = attention_layer_costs(*e.model, e.parallel, job.attention, model, e.seed);
  if (job.moe) {
    append(out, moe_layer_costs(*e.model, e.parallel, job.moe_part(e.parallel), model));
  }
  return out;
}

// Seconds of each class's kernels, forward and backward.
std::array<double, kKernelClasses> class_seconds(const LayerCosts& kernels) {
  std::array<double, kKernelClasses> out{};
  for (const KernelCosts* pass : {&kernels.fwd, &kernels.bwd}) {
    for (const auto& [name, cost] : *pass) {
      out[static_cast<std::size_t>(cost.kind)] += cost.time.seconds();
    }
  }
  return out;
}

}  // namespace

LayerCosts job_kernels(const Experiment& e, const ComputeModel& model) {
  if (!e.model) {
    return {};
  }
  return std::visit(
      Overloaded{
          [&](const AttentionLayerJob& j) {
            return attention_layer_costs(*e.model, e.parallel, j, model, e.seed);
          },
          [&](const MoeLayerJob& j) { return moe_layer_costs(*e.model, e.parallel, j, model); },
          [&](const TransformerLayerJob& j) { return transformer_kernels(e, j, model); },
          [&](const TrainingStepJob& j) {
            LayerCosts out = transformer_kernels(e, j.layer, model);
            const AttentionLayerJob& a = j.layer.attention;
            append(out, output_layer_costs(*e.model, a.seq_len * a.micro_batch / e.parallel.cp,
                                           e.parallel.tp, j.cross_entropy, model));
            return out;
          },
          [](const auto& /*no model*/) { return LayerCosts{}; },
      },
      e.job);
}

KernelSpeeds class_speeds(const LayerCosts& kernels_base, const LayerCosts& kernels_other,
                          const topo::GpuSpec& base, const topo::GpuSpec& other) {
  const std::array<double, kKernelClasses> from = class_seconds(kernels_base);
  const std::array<double, kKernelClasses> to = class_seconds(kernels_other);
  KernelSpeeds out{};
  for (std::size_t k = 0; k < kKernelClasses; ++k) {
    out[k] = from[k] > 0 && to[k] > 0 ? from[k] / to[k]
                                      : type_speed(base, other, static_cast<KernelClass>(k));
  }
  return out;
}

void price_gpu_types(Experiment& e, const std::vector<TypeCalibration>& tables) {
  const ComputeModel own = compute_model(e);
  const LayerCosts kernels = job_kernels(e, own);
  std::size_t i = 0;
  e.gpu_types.clear();
  for (const topo::Perturbation& p : e.cluster.perturbations) {
    if (p.part != topo::PerturbedPart::GpuType) {
      continue;
    }
    HOPSIM_ASSERT(i < tables.size() && p.gpu, "GPU type perturbation {} without its table",
                  p.entry);
    const TypeCalibration& t = tables[i++];
    const ComputeModel model(t.table.get(), roofline_of(*p.gpu), t.scaling, e.attention_kernel,
                             e.fp8_recipe);
    e.gpu_types.push_back(
        {p.entry, class_speeds(kernels, job_kernels(e, model), e.cluster.gpu, *p.gpu), t.name});
  }
}

}  // namespace hopsim::work
