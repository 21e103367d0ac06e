#include "workloads/ep/training_routing.hpp"

#include <algorithm>

namespace hopsim::work {

double independent_tokens(const MoeRouting& r, std::size_t ranks) {
  const auto sequence =
      static_cast<double>(r.sequence_tokens > 0 ? r.sequence_tokens : r.tokens_per_gpu);
  const double run = std::max(1.0, std::min(r.run_tokens, sequence));
  const double tokens = static_cast<double>(ranks) * static_cast<double>(r.tokens_per_gpu);
  return std::max(1.0, tokens / run);
}

double residual_scale(const MoeRouting& r) {
  return r.residual_balancer == ResidualBalancer::Bias ? kBiasResidualScale : 1.0;
}

double share_variance(const MoeRouting& r, std::size_t ranks) {
  const double p = 1.0 / static_cast<double>(r.experts);
  const double s = residual_scale(r);
  return s * s * p * (1 - p) / (independent_tokens(r, ranks) + 1);
}

std::string_view residual_balancer_name(ResidualBalancer b) {
  return b == ResidualBalancer::Bias ? "bias" : "aux_loss";
}

std::string_view parameter_source(const MoeRouting& r) {
  const bool fitted = r.run_tokens == kTrainingRunTokens;
  if (r.residual_balancer == ResidualBalancer::Bias) {
    return fitted ? "run_tokens fitted on Megatron-MoE-ModelZoo's Qwen3-235B 16K forced-balance/"
                    "dropless pair (aux loss); the bias's residual scale 0.04 / 0.52 from "
                    "arXiv 2408.15664 Table 2 (3B model, MaxVio_global, Loss-Free over "
                    "Loss-Controlled)"
                  : "run_tokens given; the bias's residual scale 0.04 / 0.52 from arXiv "
                    "2408.15664 Table 2 (3B model, MaxVio_global, Loss-Free over "
                    "Loss-Controlled)";
  }
  return fitted ? "run_tokens fitted on Megatron-MoE-ModelZoo's Qwen3-235B 16K forced-balance/"
                  "dropless pair (aux loss)"
                : "run_tokens given";
}

}  // namespace hopsim::work
