// The kernels selective recomputation runs again before a MoE layer's backward
// (workloads/model/recompute_modules.hpp), taken from the layer's own forward kernels so that
// they cost what the forward did. A MoE layer with recompute_modules (DeepSeek-V3's DualPipe
// pair, as its profile shows them) runs them inside its backward; a training step times the
// same modules from its measured forward when a layer's backward is measured without them
// (workloads/step/training_step_probes.cpp).
#pragma once

#include <cstdint>

#include "workloads/costs/layer_costs.hpp"
#include "workloads/model/model.hpp"
#include "workloads/model/recompute_modules.hpp"

namespace hopsim::work {

/// The parameters of MLA's two up-projections (queries from their latent, keys and values
/// from theirs); 0 for other models.
double up_projection_params(const ModelSpec& m);

/// The parameters of a layer's forward (non-grouped) GEMMs: attention, a dense MLP, the router
/// and the shared experts. A recomputed part's share of their time is its share of these.
double forward_gemm_params(const ModelSpec& m, bool moe_layer);

/// The up-projections' share of a layer's forward GEMMs, by parameters.
double up_projection_share(const ModelSpec& m, bool moe_layer);

/// Whether `modules` runs a forward kernel of class `kind` again, whole: core_attn the
/// attention forward, layernorm every norm, mla_up_proj (MLA) rotary and the layout copies,
/// the SwiGLUs with moe_act in a MoE layer and with mlp in a dense one; moe (a MoE layer) the
/// router's top-k, the permutes, the grouped forward GEMMs and the SwiGLUs. (The GEMMs that
/// mla_up_proj, mlp, moe and shared_experts run again are a share of a class, by parameters.)
bool recomputed_class(std::uint8_t modules, const ModelSpec& m, bool moe_layer, KernelClass kind);

/// What `modules` runs again of a MoE layer's attention part (its forward kernels `attention`,
/// norms and router included) and shared experts (`shared`), each in forward order and
/// labelled "recompute.NAME": of the attention part, core_attn the attention forward,
/// layernorm every norm, mla_up_proj (MLA) rotary, the layout copies and the up-projections
/// (their own GEMMs and casts where the list prices them so, q_up_projection and
/// kv_up_projection; otherwise one kernel, their share of the forward GEMMs of both lists by
/// parameters); of the shared experts, moe_act their SwiGLU, shared_experts and moe every
/// kernel.
struct RecomputedKernels {
  KernelCosts attention;
  KernelCosts shared;
};
RecomputedKernels recomputed_kernels(const ModelSpec& m, std::uint8_t modules,
                                     const KernelCosts& attention, const KernelCosts& shared);

/// What moe_act runs again of the routed experts' forward kernels `experts`: their SwiGLU;
/// moe: every one.
KernelCosts recomputed_expert_kernels(std::uint8_t modules, const KernelCosts& experts);

}  // namespace hopsim::work
