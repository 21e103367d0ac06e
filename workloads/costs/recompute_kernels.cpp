// Kernels that selective recomputation runs again (recompute_kernels.hpp).
#include "workloads/costs/recompute_kernels.hpp"

#include <cmath>
#include <string>

namespace hopsim::work {
namespace {

void again(const std::pair<std::string, ComputeCost>& kernel, KernelCosts& out) {
  out.emplace_back("recompute." + kernel.first, kernel.second);
}

// MLA's up-projections priced as their own GEMMs (mla_projections), their input casts included.
bool up_projection_kernel(const std::string& name) {
  return name.starts_with("q_up_projection") || name.starts_with("kv_up_projection");
}

}  // namespace

double up_projection_params(const ModelSpec& m) {
  if (!m.mla) {
    return 0;
  }
  const MlaShape& a = m.mla_shape;
  return static_cast<double>(a.q_lora_rank * m.heads * (a.qk_nope_head_dim + a.qk_rope_head_dim) +
                             a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim));
}

double forward_gemm_params(const ModelSpec& m, bool moe_layer) {
  const LayerParams lp = layer_params(m, moe_layer);
  return lp.attention + lp.mlp + lp.router + lp.shared_experts;
}

double up_projection_share(const ModelSpec& m, bool moe_layer) {
  const double gemms = forward_gemm_params(m, moe_layer);
  return gemms > 0 ? up_projection_params(m) / gemms : 0.0;
}

bool recomputed_class(std::uint8_t modules, const ModelSpec& m, bool moe_layer, KernelClass kind) {
  switch (kind) {
    case KernelClass::AttentionFwd:
      return has_module(modules, RecomputeModule::CoreAttn);
    case KernelClass::Norm:
      return has_module(modules, RecomputeModule::LayerNorm);
    case KernelClass::Rotary:
    case KernelClass::Copy:
      return m.mla && has_module(modules, RecomputeModule::MlaUpProj);
    case KernelClass::SwiGlu:
      return has_module(modules, moe_layer ? RecomputeModule::MoeAct : RecomputeModule::Mlp) ||
             (moe_layer && has_module(modules, RecomputeModule::Moe));
    case KernelClass::Router:
    case KernelClass::Permute:
    case KernelClass::GroupedFprop:
      return moe_layer && has_module(modules, RecomputeModule::Moe);
    default:
      return false;
  }
}

RecomputedKernels recomputed_kernels(const ModelSpec& m, std::uint8_t modules,
                                     const KernelCosts& attention, const KernelCosts& shared) {
  RecomputedKernels out;
  ComputeCost gemms;  // the forward GEMMs of both lists, for the up-projections' share
  gemms.kind = KernelClass::GemmFprop;
  for (const KernelCosts* list : {&attention, &shared}) {
    for (const auto& kernel : *list) {
      if (kernel.second.kind == KernelClass::GemmFprop) {
        gemms.time += kernel.second.time;
        gemms.flops.n += kernel.second.flops.n;
        gemms.bytes = gemms.bytes + kernel.second.bytes;
        gemms.source = kernel.second.source;
      }
    }
  }
  const double share = has_module(modules, RecomputeModule::MlaUpProj)
                           ? up_projection_share(m, true)
                           : 0.0;
  for (const auto& kernel : attention) {
    if (recomputed_class(modules, m, true, kernel.second.kind) ||
        (share > 0 && up_projection_kernel(kernel.first)) ||
        (has_module(modules, RecomputeModule::Moe) && kernel.first.starts_with("router"))) {
      again(kernel, out.attention);
    }
    if (share > 0 && kernel.first == "attention_projections") {
      ComputeCost up = gemms;
      up.time = Time::ps(std::llround(static_cast<double>(gemms.time.count_ps()) * share));
      up.flops.n = gemms.flops.n * share;
      up.bytes.n =
          static_cast<std::int64_t>(std::llround(static_cast<double>(gemms.bytes.n) * share));
      out.attention.emplace_back("recompute.up_projections", up);
    }
  }
  // shared_experts (and moe) run the shared experts' forward again whole, GEMMs and casts too.
  const bool whole_shared = has_module(modules, RecomputeModule::SharedExperts) ||
                            has_module(modules, RecomputeModule::Moe);
  for (const auto& kernel : shared) {
    if (whole_shared || recomputed_class(modules, m, true, kernel.second.kind)) {
      again(kernel, out.shared);
    }
  }
  return out;
}

KernelCosts recomputed_expert_kernels(std::uint8_t modules, const KernelCosts& experts) {
  KernelCosts out;
  const bool whole = has_module(modules, RecomputeModule::Moe);
  if (whole || has_module(modules, RecomputeModule::MoeAct)) {
    for (const auto& kernel : experts) {
      if (whole || kernel.second.kind == KernelClass::SwiGlu) {
        again(kernel, out);
      }
    }
  }
  return out;
}

}  // namespace hopsim::work
