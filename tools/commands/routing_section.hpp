// explain's "routing" object: how a MoE layout's tokens choose experts, and the load that gives
// its EP group 0 (docs/expert-parallelism.md#training-routing).
#pragma once

#include <nlohmann/json.hpp>

#include "workloads/ep/moe_layer_job.hpp"
#include "workloads/mesh/mesh.hpp"

namespace hopsim::tools {

/// The routing's mode (balanced, training or the distribution), training's run length and the
/// independent choices a batch routes as, and the busiest rank's load (rows its experts receive) over
/// the mean, and the busiest expert's, for EP group 0 of `spec` routing one batch as `hopsim
/// run` routes its first micro-batch there (same seed). Linear in the group's tokens.
nlohmann::ordered_json routing_section(const work::MoeLayerJob& job, const work::ParallelSpec& spec,
                                       int gpus_per_node);

}  // namespace hopsim::tools
