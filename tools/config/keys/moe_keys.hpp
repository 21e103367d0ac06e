// The keys of a `moe_layer` workload and of its routing object; the transformer layer and the
// training step read their MoE part with the same keys.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "tools/config/key.hpp"
#include "tools/config/keys/attention_keys.hpp"
#include "tools/config/keys/collective_keys.hpp"
#include "workloads/collectives/ep_algorithms.hpp"
#include "workloads/ep/moe_layer_job.hpp"
#include "workloads/model/recompute_modules.hpp"

namespace hopsim::config::keys::moe_layer {

inline constexpr std::array kKindName{work::MoeLayerJob::kKind};
// In work::EpAlgorithm's and work::EpOverlap's order.
/// The EP exchanges as their table names them (workloads/collectives/ep_algorithms.hpp).
inline constexpr auto kAlgorithmNames = work::ep_algorithm_names();
/// The exchanges' doc line from their rows: what moves, the cluster keys each reads.
inline std::string algorithms_doc() {
  return "how dispatch and combine run: " + work::ep_algorithms_described();
}
inline constexpr std::array<std::string_view, 3> kOverlapNames{"none", "two_microbatch",
                                                               "dualpipe_pair"};
/// Selective recomputation's modules as their table names them (work::kRecomputeModules).
inline constexpr auto kRecomputeModuleNames =
    names_of<&decltype(work::kRecomputeModules)::value_type::second>(work::kRecomputeModules);
inline constexpr std::int64_t kMaxCount = std::int64_t{1} << 20;

inline constexpr ChoiceKey kKind{
    .name = "kind",
    .choices = kKindName,
    .fallback = kRequired,
    .doc = "one MoE layer under EP: attention and router, dispatch, experts, combine"};

inline constexpr IntegerKey kTokensPerGpu{.name = "tokens_per_gpu",
                                          .lo = 1,
                                          .hi = std::int64_t{1} << 24,
                                          .fallback = kRequired,
                                          .doc = "tokens each GPU routes"};

inline constexpr IntegerKey kTopK{.name = "top_k",
                                  .lo = 1,
                                  .hi = kMaxCount,
                                  .fallback = "the model's",
                                  .doc = "experts per token"};

inline constexpr IntegerKey kMaxNodesPerToken{.name = "max_nodes_per_token",
                                              .lo = 0,
                                              .hi = kMaxCount,
                                              .fallback = "the model's",
                                              .doc = "nodes a token may reach; 0: no limit"};

inline constexpr NumberKey kDispatchBytesPerElement{
    .name = "dispatch_bytes_per_element",
    .sign = Sign::Positive,
    .hi = 64,
    .fallback = "1 with FP8 experts, 2 with BF16",
    .doc =
        "dispatch payload (FP8: 1; with scales 1.03125; BF16: 2); also the gradients sent to "
        "the experts in backward"};

inline constexpr ChoiceKey kExpertDtype{
    .name = "expert_dtype",
    .choices = attention::kDtypeNames,
    .value = "fp8",
    .doc =
        "the routed experts' grouped GEMMs: fp8 (DeepSeek-V3's recipe: rows dispatched in FP8, "
        "the other GEMM inputs cast by fp8_recipe, FP8 copies of the expert weights in memory) "
        "or bf16 (Megatron's BF16 MoE recipes: no casts, BF16 rows)"};

inline constexpr ChoiceKey kSharedExpertDtype{.name = "shared_expert_dtype",
                                              .choices = attention::kDtypeNames,
                                              .fallback = "expert_dtype",
                                              .doc = "the shared experts' GEMMs"};

inline constexpr ChoiceKey kRouterDtype{
    .name = "router_dtype",
    .choices = attention::kDtypeNames,
    .value = "bf16",
    .doc = "the router's GEMM (DeepSeek-V3 keeps it in BF16 under its FP8 recipe)"};

inline constexpr NumberKey kCombineBytesPerElement{
    .name = "combine_bytes_per_element",
    .sign = Sign::Positive,
    .hi = 64,
    .value = 2,
    .doc = "combine payload (BF16: 2); also the gradients sent back in backward"};

inline constexpr ValueKey kRouting{
    .name = "routing",
    .type = "object, or \"balanced\" or \"training\"",
    .fallback = "balanced",
    .doc =
        "expert popularity (distribution, zipf_s, ...) and the balancer; \"balanced\": "
        "uniform (Megatron's --moe-router-force-load-balancing); \"training\": distribution "
        "training at its fitted run length"};

inline constexpr NumberKey kCapacityFactor{
    .name = "capacity_factor",
    .lo = 0.01,
    .hi = 1000,
    .fallback = "none",
    .doc =
        "an expert takes at most this times its even share of the group's selections; the "
        "rest are dropped (counted in the report)"};

inline constexpr ChoiceKey kAlgorithm{.name = "algorithm",
                                      .choices = kAlgorithmNames,
                                      .value = "two_tier",
                                      .table_doc = algorithms_doc};

inline constexpr ChoiceKey kPasses{
    .name = "passes",
    .choices = attention::kPassNames,
    .fallback = "\"forward\" (dualpipe_pair: \"both\")",
    .doc =
        "which passes run (backward: exchanges in the same two directions, GEMMs at twice the"
        " FLOPs)"};

inline constexpr ChoiceKey kOverlap{
    .name = "overlap",
    .choices = kOverlapNames,
    .value = "none",
    .doc =
        "two_microbatch: the tokens split in two (the halves of one sequence: the second's "
        "attention also reads the first's keys); one half's exchanges run while the other "
        "computes; dualpipe_pair: a forward chunk of one micro-batch against a backward chunk"
        " of another, layer by layer, as in DualPipe"};

inline constexpr IntegerKey kCommSms{
    .name = "comm_sms",
    .lo = 0,
    .hi = kMaxCount,
    .also = "below the GPU's SMs",
    .value = 0,
    .doc =
        "SMs the communication kernels hold while they run: a compute kernel runs on the rest, "
        "slower in proportion, for the time it spends beside an exchange of its GPU, and on "
        "every SM otherwise"};

inline constexpr BooleanKey kAttention{.name = "attention",
                                       .value = true,
                                       .doc = "the attention part before the router (its compute)"};

inline constexpr IntegerKey kLayers{
    .name = "layers",
    .lo = 1,
    .hi = kMaxCount,
    .value = 1,
    .doc =
        "identical layers in a row; a micro-batch's next layer starts when its combine has "
        "landed"};

inline constexpr BooleanKey kRepeatLayers{
    .name = "repeat_layers",
    .value = true,
    .doc =
        "over 12 layers: when 2, 3 and 4 layers show a steady schedule (the fourth adds what "
        "the third did), simulate 4 and repeat the last one's figures for the rest; false: "
        "simulate every layer"};

inline constexpr ChoiceKey kRecomputeModules{
    .name = "recompute_modules",
    .choices = kRecomputeModuleNames,
    .shape = Shape::List,
    .fallback = "none",
    .doc =
        "a backward's selective recomputation (as a training step's): each backward layer "
        "runs these forward kernels again first, the attention part's before its backward, "
        "the SwiGLUs before the experts' (mla_up_proj: the up-projections' share of the "
        "forward GEMMs, rotary and MLA's layout copies; shared_experts: the shared experts' "
        "forward; mlp has no kernels in a MoE layer, and moe, which runs the exchanges again, "
        "is a training step's); needs a backward"};

inline constexpr IntegerKey kChunkTokens{
    .name = "chunk_tokens",
    .lo = 1,
    .hi = std::int64_t{1} << 24,
    .fallback = "DeepEP's for the EP size",
    .doc = "two_tier: tokens per InfiniBand piece, forwarded over NVLink as it lands"};

inline constexpr ChoiceKey kPieces{
    .name = "pieces",
    .choices = work::kPieceNames,
    .fallback = "\"streamed\"",
    .doc =
        "two_tier: per node pair the first piece, the rest, and the last piece's second stage"
        " as flows (16; DeepSeek-V3 layers within about 1% of each); each: every piece its "
        "own flows, as DeepEP sends them"};

inline constexpr IntegerKey kRedundantExperts{
    .name = "redundant_experts",
    .lo = 0,
    .hi = kMaxCount,
    .also = "a multiple of ep",
    .value = 0,
    .doc =
        "copies of the hottest experts (by the routing's popularity) in extra slots, as many "
        "on every GPU of an EP group; a token goes to the copy with the fewest selections so "
        "far"};

inline constexpr ValueKey kPlacement{
    .name = "placement",
    .type = "array of arrays of expert ids",
    .fallback = "even",
    .doc =
        "which experts each rank of every EP group hosts (one list per rank; an expert on two"
        " ranks has two copies); every expert on some rank"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kKind,
                                                     &kTokensPerGpu,
                                                     &kTopK,
                                                     &kMaxNodesPerToken,
                                                     &kDispatchBytesPerElement,
                                                     &kCombineBytesPerElement,
                                                     &kExpertDtype,
                                                     &kSharedExpertDtype,
                                                     &kRouterDtype,
                                                     &kRouting,
                                                     &kCapacityFactor,
                                                     &kAlgorithm,
                                                     &kPasses,
                                                     &kOverlap,
                                                     &kCommSms,
                                                     &kAttention,
                                                     &attention::kAttentionKernel,
                                                     &attention::kFp8Recipe,
                                                     &kLayers,
                                                     &kRepeatLayers,
                                                     &kRecomputeModules,
                                                     &kChunkTokens,
                                                     &kPieces,
                                                     &kRedundantExperts,
                                                     &kPlacement});
inline constexpr Section kSection{"experiment", "/workload (kind moe_layer)",
                                  "a MoE layer under expert parallelism", kKeys};

}  // namespace hopsim::config::keys::moe_layer

namespace hopsim::config::keys::routing {

/// In work::Balancer's order.
inline constexpr std::array<std::string_view, 3> kBalancerNames{"none", "bias", "aux_loss"};

inline constexpr ChoiceKey kBalancer{
    .name = "balancer",
    .choices = kBalancerNames,
    .value = "none",
    .doc =
        "bias: DeepSeek-V3's per-expert routing bias, nudged against each expert's load after"
        " every training step, simulated over steps before the layer; aux_loss: an auxiliary "
        "balance loss, modelled as a share weight / (weight + 0.01) of every expert's weight "
        "made even. With distribution training, the balancer whose residual a batch holds "
        "(aux_loss by default, the run length's fit; bias keeps 0.04 / 0.52 of its deviation "
        "from even, arXiv 2408.15664 Table 2); none is refused there"};

inline constexpr IntegerKey kSteps{.name = "steps",
                                   .lo = 1,
                                   .hi = 10000,
                                   .value = 50,
                                   .doc = "bias: training steps before the simulated one"};

inline constexpr NumberKey kBiasUpdate{
    .name = "bias_update",
    .lo = 1e-6,
    .hi = 1,
    .value = 0.05,
    .doc =
        "bias: gamma, added to (underloaded) or taken from (overloaded) an expert's log "
        "weight"};

inline constexpr NumberKey kAuxLossWeight{
    .name = "aux_loss_weight",
    .lo = 0,
    .hi = 100,
    .value = 0.01,
    .doc =
        "aux_loss: the loss's weight; at 0.01 half of each expert's weight above or below "
        "even remains"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&popularity::kDistribution, &popularity::kZipfS, &popularity::kAlpha, &popularity::kCounts,
     &popularity::kRunTokens, &kBalancer, &kSteps, &kBiasUpdate, &kAuxLossWeight});
inline constexpr Section kSection{"experiment", "/workload/routing (kind moe_layer)",
                                  "how popular the experts are", kKeys};

}  // namespace hopsim::config::keys::routing
