// The keys of a `transformer_layer` workload: its attention part's (attention_keys.hpp), the
// feed-forward part's, and under `moe` the MoE part's (moe_keys.hpp).
#pragma once

#include <array>
#include <string_view>

#include "tools/config/key.hpp"
#include "tools/config/keys/attention_keys.hpp"
#include "tools/config/keys/moe_keys.hpp"
#include "workloads/layer/transformer_layer_job.hpp"

namespace hopsim::config::keys::transformer {

inline constexpr std::array kKindName{work::TransformerLayerJob::kKind};
inline constexpr std::array<std::string_view, 2> kFfnNames{"dense", "moe"};

inline constexpr ChoiceKey kKind{
    .name = "kind",
    .choices = kKindName,
    .fallback = kRequired,
    .doc =
        "transformer layers: attention under TP and CP, then the feed-forward part (a dense "
        "MLP, or a MoE under EP)"};

inline constexpr IntegerKey kSeqLen = with_doc(
    attention::kSeqLen,
    "new tokens per sequence; cp (contiguous) or 2 x cp (zigzag) must divide it, and with a MoE "
    "cp x tp must divide seq_len x micro_batch");

inline constexpr ChoiceKey kPasses = with_doc(
    attention::kPasses, "which passes run (backward: MoE part, then attention, layers in reverse)");

inline constexpr ChoiceKey kMlpDtype = with_doc(attention::kMlpDtype, "a dense MLP's GEMMs");

inline constexpr ValueKey kCp =
    with_doc(attention::kCp, "the context-parallel algorithm (as for attention_layer)");

inline constexpr ChoiceKey kFfn{
    .name = "ffn",
    .choices = kFfnNames,
    .fallback = "moe when the model has routed experts",
    .doc =
        "the feed-forward part: the model's dense SwiGLU MLP (ffn_hidden), or its MoE under "
        "EP"};

inline constexpr ValueKey kMoe{
    .name = "moe",
    .type = "object",
    .fallback = "the model's routing, two_tier",
    .doc = "the MoE part's routing and exchanges; checked, but not used, when ffn is dense"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kKind, &kSeqLen, &attention::kMicroBatch, &attention::kMask, &attention::kDocuments,
     &attention::kDocumentMeanTokens, &attention::kLayers, &attention::kMode, &kPasses,
     &attention::kDtype, &attention::kFp8DotProductAttention, &kMlpDtype, &kCp,
     &attention::kAttentionKernel, &attention::kFp8Recipe,
     &attention::kTpOverlap, &kFfn, &kMoe});
inline constexpr Section kSection{
    "experiment", "/workload (kind transformer_layer)",
    "transformer layers: attention under CP, then a dense MLP or a MoE under EP", kKeys};

}  // namespace hopsim::config::keys::transformer

namespace hopsim::config::keys::transformer_moe {

// The MoE part's keys mean what they mean for moe_layer.
inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&moe_layer::kTopK, &moe_layer::kMaxNodesPerToken, &moe_layer::kDispatchBytesPerElement,
     &moe_layer::kCombineBytesPerElement, &moe_layer::kExpertDtype, &moe_layer::kSharedExpertDtype,
     &moe_layer::kRouterDtype, &moe_layer::kRouting, &moe_layer::kCapacityFactor,
     &moe_layer::kAlgorithm, &moe_layer::kCommSms, &moe_layer::kChunkTokens, &moe_layer::kPieces,
     &moe_layer::kRedundantExperts, &moe_layer::kPlacement});
inline constexpr Section kSection{
    "experiment", "/workload/moe (kind transformer_layer)",
    "the MoE part's routing and exchanges (its routing object as for moe_layer)", kKeys};

}  // namespace hopsim::config::keys::transformer_moe
