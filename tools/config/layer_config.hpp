// Reads `parallel` and the layer workloads (`attention_layer`, `moe_layer`,
// `transformer_layer`, and `training_step`, whose layers are transformer layers) of an
// experiment.
#pragma once

#include <cstdint>

#include "tools/config/job_config.hpp"
#include "tools/config/node.hpp"
#include "workloads/mesh/mesh.hpp"

namespace hopsim::config {

/// /parallel: degrees (each >= 1), the mesh order and tp_across_nodes. Whether they fit the
/// cluster and the model is work::Mesh::check's and work::check_model_fit's.
work::ParallelSpec parse_parallel(const Node& n);

/// A list of selective recomputation's module names (`key`, a recompute_modules: "core_attn",
/// "layernorm", "mlp", "moe_act", "mla_up_proj") as RecomputeModule bits; at least one.
std::uint8_t parse_recompute_modules(const Node& list, const ChoiceKey& key);

/// /workload of kind "attention_layer".
template <>
work::AttentionLayerJob parse_job<work::AttentionLayerJob>(const Node& workload,
                                                           const JobParseContext& ctx);

/// /workload of kind "moe_layer": routing defaults from the model (top_k, node limit).
template <>
work::MoeLayerJob parse_job<work::MoeLayerJob>(const Node& workload, const JobParseContext& ctx);

/// The keys of a transformer layer (the attention keys, ffn, the MoE part's under moe) in a
/// workload of kind `kind`, whose own section the caller has checked.
work::TransformerLayerJob parse_transformer_layer(const Node& n, const JobParseContext& ctx,
                                                  std::string_view kind);

/// /workload of kind "transformer_layer": the attention keys, ffn, and the MoE part's under moe.
template <>
work::TransformerLayerJob parse_job<work::TransformerLayerJob>(const Node& workload,
                                                               const JobParseContext& ctx);

/// /workload of kind "training_step": a transformer layer's keys (its layers and passes are
/// the step's) and the step's own (keys::step).
template <>
work::TrainingStepJob parse_job<work::TrainingStepJob>(const Node& workload,
                                                       const JobParseContext& ctx);

}  // namespace hopsim::config
