// Megatron-LM's own estimate of a step's memory per GPU (its --log-memory-to-tensorboard
// "theoretical memory footprint", megatron/training/theoretical_memory_usage.py), computed from
// its published formula for the same layout, so that hopsim's term-by-term count can be set
// beside it (hopsim explain, docs/training-step.md#megatrons-estimate).
#pragma once

#include <optional>
#include <string>

#include "workloads/step/step_model.hpp"

namespace hopsim::work {

/// Megatron's estimate for the most loaded GPU, which its formula takes to be the first
/// pipeline stage's, in bytes.
struct MegatronEstimate {
  /// (layers / pp + the embedding) / tp parameters, at 18 bytes each, or 6 + 12 / dp with the
  /// distributed optimizer (BF16 weight, FP32 main gradient, FP32 master weight and Adam's
  /// moments sharded over dp)
  double weights_and_optimizer = 0;
  /// Korthikanti et al. (arXiv 2205.05198) Table 2 with sequence parallelism and selective
  /// recomputation: s b h (18 + 4 ffn / h) bytes per layer, times all the model's layers (pp
  /// micro-batches of layers / pp each), the embedding's input and dropout, times the
  /// interleaved schedule's penalty 1 + (pp - 1) / (pp v), over tp
  double activations = 0;
  /// The per-layer figure above per token and hidden unit: 18 + 4 ffn / h
  double layer_bytes_per_token_h = 0;
  double total() const { return weights_and_optimizer + activations; }
};

/// Megatron's estimate for step `s`, or why its formula does not describe the step: it counts
/// dense GPT layers (MoE layers' experts and MLA's latents are not in its activation formula)
/// with sequence parallelism and selective (or no) recomputation.
std::optional<MegatronEstimate> megatron_estimate(const StepShape& s, std::string& why_not);

}  // namespace hopsim::work
