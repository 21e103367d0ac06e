// The keys of a model file: its shape, and its MLA and MoE parts.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tools/config/key.hpp"

namespace hopsim::config::keys::model {

// Ranges that keep every kernel shape the layers build (widths x heads x tokens) within what the
// compute model accepts (2^31 per dimension), and far above any real model (Llama 3 405B: hidden
// 16384, 128 heads; DeepSeek-V3: 256 experts, vocabulary 129280).
inline constexpr std::int64_t kMaxWidth = std::int64_t{1} << 20;  // hidden, FFN and LoRA widths
inline constexpr std::int64_t kMaxHeads = std::int64_t{1} << 14;  // heads and per-head dimensions
inline constexpr std::int64_t kMaxLayers = 100'000;

/// A width (hidden, FFN, LoRA rank) in [1, kMaxWidth], given.
constexpr IntegerKey width(std::string_view name, std::string_view doc) {
  return {.name = name, .lo = 1, .hi = kMaxWidth, .fallback = kRequired, .doc = doc};
}

/// A count of heads or a per-head dimension in [1, kMaxHeads]; given, or `fallback` in words.
constexpr IntegerKey heads(std::string_view name, std::string_view doc,
                           std::string_view fallback = kRequired) {
  return {.name = name, .lo = 1, .hi = kMaxHeads, .fallback = fallback, .doc = doc};
}

inline constexpr StringKey kName{
    .name = "name", .fallback = kRequired, .doc = "names the model in reports"};

inline constexpr StringKey kDescription{
    .name = "description", .fallback = "none", .doc = "free text"};

inline constexpr IntegerKey kLayers{.name = "layers",
                                    .lo = 1,
                                    .hi = model::kMaxLayers,
                                    .fallback = kRequired,
                                    .doc = "transformer layers"};

inline constexpr IntegerKey kHidden = model::width("hidden", "model width");

inline constexpr IntegerKey kFfnHidden =
    model::width("ffn_hidden", "SwiGLU MLP width of dense layers");

inline constexpr IntegerKey kHeads = model::heads("heads", "query heads");

inline constexpr IntegerKey kKvHeads =
    model::heads("kv_heads", "key/value heads (GQA); must divide heads", "heads");

inline constexpr IntegerKey kHeadDim =
    model::heads("head_dim", "per-head dimension", "hidden / heads");

inline constexpr IntegerKey kVocab{.name = "vocab",
                                   .lo = 1,
                                   .hi = std::int64_t{1} << 24,
                                   .fallback = kRequired,
                                   .doc = "vocabulary size"};

inline constexpr BooleanKey kTiedEmbeddings{
    .name = "tied_embeddings", .value = false, .doc = "input and output embeddings shared"};

inline constexpr ValueKey kMla{.name = "mla",
                               .type = "object",
                               .fallback = "none",
                               .doc = "multi-head latent attention (DeepSeek-V2/V3)"};

inline constexpr ValueKey kMoe{
    .name = "moe", .type = "object", .fallback = "none (dense)", .doc = "mixture of experts"};

inline constexpr IntegerKey kMtpDepth{
    .name = "mtp_depth",
    .lo = 0,
    .hi = 64,
    .value = 0,
    .doc = "multi-token-prediction modules a training step runs after the last layer"};

inline constexpr ValueKey kSources{
    .name = "sources", .type = "object", .fallback = "none", .doc = "JSON pointer -> citation"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kName, &kDescription, &kLayers, &kHidden, &kFfnHidden, &kHeads, &kKvHeads, &kHeadDim, &kVocab,
     &kTiedEmbeddings, &kMla, &kMoe, &kMtpDepth, &kSources});
inline constexpr Section kSection{"model", "/", "a model (configs/models/*.json)", kKeys};

}  // namespace hopsim::config::keys::model

namespace hopsim::config::keys::mla {

inline constexpr IntegerKey kQLoraRank{
    .name = "q_lora_rank",
    .lo = 0,
    .hi = model::kMaxWidth,
    .value = 0,
    .doc = "query compression rank; 0: queries projected directly"};

inline constexpr IntegerKey kKvLoraRank =
    model::width("kv_lora_rank", "key/value compression rank");

inline constexpr IntegerKey kQkNopeHeadDim =
    model::heads("qk_nope_head_dim", "per-head query/key dimension without RoPE");

inline constexpr IntegerKey kQkRopeHeadDim =
    model::heads("qk_rope_head_dim", "per-head decoupled RoPE dimension");

inline constexpr IntegerKey kVHeadDim = model::heads("v_head_dim", "per-head value dimension");

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kQLoraRank, &kKvLoraRank, &kQkNopeHeadDim, &kQkRopeHeadDim, &kVHeadDim});
inline constexpr Section kSection{"model", "/mla", "multi-head latent attention", kKeys};

}  // namespace hopsim::config::keys::mla

namespace hopsim::config::keys::model_moe {

inline constexpr std::int64_t kMaxExperts = std::int64_t{1} << 16;

inline constexpr IntegerKey kRoutedExperts{.name = "routed_experts",
                                           .lo = 1,
                                           .hi = kMaxExperts,
                                           .fallback = kRequired,
                                           .doc = "routed experts per MoE layer"};

inline constexpr IntegerKey kSharedExperts{.name = "shared_experts",
                                           .lo = 0,
                                           .hi = std::int64_t{1} << 10,
                                           .value = 0,
                                           .doc = "shared experts per MoE layer"};

inline constexpr IntegerKey kTopK{.name = "top_k",
                                  .lo = 1,
                                  .hi = kMaxExperts,
                                  .also = "at most routed_experts",
                                  .fallback = kRequired,
                                  .doc = "routed experts per token"};

inline constexpr IntegerKey kExpertFfnHidden =
    model::width("expert_ffn_hidden", "each expert's SwiGLU width");

inline constexpr IntegerKey kMaxNodesPerToken{.name = "max_nodes_per_token",
                                              .lo = 0,
                                              .hi = kMaxExperts,
                                              .value = 0,
                                              .fallback = "no limit",
                                              .doc = "node-limited routing"};

inline constexpr IntegerKey kFirstDenseLayers{.name = "first_dense_layers",
                                              .lo = 0,
                                              .hi = model::kMaxLayers,
                                              .also = "at most layers",
                                              .value = 0,
                                              .doc = "dense layers before the first MoE"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kRoutedExperts, &kSharedExperts, &kTopK, &kExpertFfnHidden,
                           &kMaxNodesPerToken, &kFirstDenseLayers});
inline constexpr Section kSection{"model", "/moe", "mixture of experts", kKeys};

}  // namespace hopsim::config::keys::model_moe
