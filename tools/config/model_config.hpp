// Reads a model (configs/models/*.json) into work::ModelSpec.
#pragma once

#include "tools/config/node.hpp"
#include "workloads/model/model.hpp"

namespace hopsim::config {

/// Parses and checks a model file: shapes positive, heads divisible by kv_heads, MoE and MLA
/// sections complete. Throws ConfigError naming the file and JSON pointer.
work::ModelSpec parse_model(const Node& root);

}  // namespace hopsim::config
