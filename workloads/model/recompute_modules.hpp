// Megatron's selective recomputation modules, as bits: what a layer runs again before its
// backward instead of keeping what it made. A training step counts the memory they save
// (workloads/step) and a MoE layer or a step runs their kernels again
// (workloads/costs/recompute_kernels.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace hopsim::work {

/// Megatron's --recompute-modules, what selective recomputation runs again (a bit each):
/// core_attn (the attention kernel: with FlashAttention the scores are never kept, so it
/// saves no memory and costs the attention forward), layernorm (the RMSNorms, MLA's latent
/// ones too: their outputs are not kept), mlp (a dense layer's MLP: gate, up and SwiGLU
/// outputs not kept), moe_act (the experts' SwiGLU: its output not kept), mla_up_proj (MLA's
/// up-projections: the per-head queries, keys and values not kept, only the compressed
/// latents; rotary and the layout copies that read them run again too), moe (the whole MoE
/// part after its norm: router, dispatch, experts, combine and shared experts; only its input
/// is kept), shared_experts (the shared experts: their gate, up and SwiGLU outputs not kept).
enum class RecomputeModule : std::uint8_t {
  CoreAttn = 1,
  LayerNorm = 2,
  Mlp = 4,
  MoeAct = 8,
  MlaUpProj = 16,
  Moe = 32,
  SharedExperts = 64,
};
inline constexpr std::array<std::pair<RecomputeModule, std::string_view>, 7> kRecomputeModules{{
    {RecomputeModule::CoreAttn, "core_attn"},
    {RecomputeModule::LayerNorm, "layernorm"},
    {RecomputeModule::Mlp, "mlp"},
    {RecomputeModule::MoeAct, "moe_act"},
    {RecomputeModule::MlaUpProj, "mla_up_proj"},
    {RecomputeModule::Moe, "moe"},
    {RecomputeModule::SharedExperts, "shared_experts"},
}};
/// Megatron's default for selective: core_attn.
inline constexpr std::uint8_t kDefaultRecomputeModules =
    static_cast<std::uint8_t>(RecomputeModule::CoreAttn);
/// Whether `modules` (a set of RecomputeModule bits) has `m`.
constexpr bool has_module(std::uint8_t modules, RecomputeModule m) {
  return (modules & static_cast<std::uint8_t>(m)) != 0;
}

}  // namespace hopsim::work
