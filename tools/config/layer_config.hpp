// Reads `parallel` and the layer workloads (`attention_layer`, `moe_layer`,
// `transformer_layer`) of an experiment.
#pragma once

#include "tools/config/job_config.hpp"
#include "tools/config/node.hpp"
#include "workloads/mesh/mesh.hpp"

namespace hopsim::config {

/// /parallel: degrees (each >= 1), the mesh order and tp_across_nodes. Whether they fit the
/// cluster and the model is work::Mesh::check's and work::check_model_fit's.
work::ParallelSpec parse_parallel(const Node& n);

/// /workload of kind "attention_layer".
template <>
work::AttentionLayerJob parse_job<work::AttentionLayerJob>(const Node& workload,
                                                           const JobParseContext& ctx);

/// /workload of kind "moe_layer": routing defaults from the model (top_k, node limit).
template <>
work::MoeLayerJob parse_job<work::MoeLayerJob>(const Node& workload, const JobParseContext& ctx);

/// /workload of kind "transformer_layer": the attention keys, ffn, and the MoE part's under moe.
template <>
work::TransformerLayerJob parse_job<work::TransformerLayerJob>(const Node& workload,
                                                               const JobParseContext& ctx);

}  // namespace hopsim::config
