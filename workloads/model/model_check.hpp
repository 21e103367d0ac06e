// The checks a model must pass on its own, and against the parallel degrees it runs under.
#pragma once

#include "sim/problem.hpp"
#include "workloads/mesh/mesh.hpp"
#include "workloads/model/model.hpp"

namespace hopsim::work {

/// Shapes that contradict each other, as pointers into a model document: kv_heads must divide heads,
/// top_k must not exceed the routed experts, first_dense_layers must not exceed the layers.
Problems check_model(const ModelSpec& m);

/// Degrees the model cannot be split by, as pointers under /parallel: tp must divide the heads
/// and divide or be a multiple of the KV heads (KV heads are then replicated); ep must divide
/// the routed experts.
Problems check_model_fit(const ModelSpec& m, const ParallelSpec& p);

}  // namespace hopsim::work
