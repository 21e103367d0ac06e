// Reads `parallel` and the layer workloads (`attention_layer`, `moe_layer`) of an experiment.
#pragma once

#include "tools/config/node.hpp"
#include "workloads/jobs/layer_jobs.hpp"
#include "workloads/model/model.hpp"

namespace hopsim::config {

/// /parallel: degrees >= 1 whose product fits the cluster; tp must divide the heads.
work::ParallelSpec parse_parallel(const Node& n, const work::ModelSpec* model, int gpus);

/// /workload of kind "attention_layer"; seq_len must split into 2*cp chunks.
work::AttentionLayerJob parse_attention_layer(const Node& n, const work::ParallelSpec& parallel);

/// /workload of kind "moe_layer"; the model must be a MoE whose experts split over ep.
work::MoeLayerJob parse_moe_layer(const Node& n, const work::ModelSpec& model,
                                  const work::ParallelSpec& parallel);

}  // namespace hopsim::config
