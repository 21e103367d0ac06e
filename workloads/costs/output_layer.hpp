// The output layer of a training step on one GPU of the last pipeline stage, for one
// micro-batch: the final RMSNorm over the GPU's sequence-parallel share of the tokens, the head
// GEMM (BF16) over every token of its TP group against its vocab/tp columns, and the
// cross-entropy loss over those logits (docs/training-step.md, "The output layer"); then, for
// each multi-token-prediction module of the model, its norms and projection, and the head and
// loss again (its transformer block is a layer of the last stage).
//
// (The loss's bytes by implementation: layer_kernels.hpp.)
#pragma once

#include <cstdint>

#include "workloads/costs/layer_costs.hpp"
#include "workloads/costs/layer_kernels.hpp"

namespace hopsim::work {

/// The output layer's kernels on one GPU: `tokens` the TP group's (sequence x micro-batch /
/// cp), `tp` splitting the vocabulary and, by sequence parallelism, the norm's tokens.
LayerCosts output_layer_costs(const ModelSpec& m, std::int64_t tokens, std::int64_t tp,
                              CrossEntropyKernel loss, const ComputeModel& model);

}  // namespace hopsim::work
