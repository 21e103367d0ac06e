// Megatron-LM's theoretical memory per GPU, from its published formula (see the header).
#include "workloads/step/megatron_estimate.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/int_math.hpp"

namespace hopsim::work {
namespace {

// Parameters of the most loaded model shard as Megatron counts them: the transformer block's
// (its layers and the final norm) over pp, plus the input embedding, over tp; the output
// layer too when one stage holds everything and the embeddings are untied.
double most_loaded_params(const StepShape& s) {
  const ModelSpec& m = *s.model;
  const ParallelSpec& p = s.parallel;
  const LayerParams lp = layer_params(m, false);
  const double layer = lp.attention + lp.mlp + lp.norms;
  const double block = d(m.layers) * layer + d(m.hidden);
  const double embedding = d(m.vocab) * d(m.hidden);
  double params = (block / d(p.pp) + embedding) / d(p.tp);
  if (!m.tied_embeddings && p.pp == 1) {
    params += embedding / d(p.tp);
  }
  return params;
}

}  // namespace

std::optional<MegatronEstimate> megatron_estimate(const StepShape& s, std::string& why_not) {
  const ModelSpec& m = *s.model;
  const ParallelSpec& p = s.parallel;
  if (m.moe.routed_experts > 0 || m.mla) {
    why_not =
        "Megatron's formula does not describe a MoE or MLA model: it puts every routed expert "
        "on each GPU (weights split over tp and pp, not ep) and counts a dense layer's "
        "activations (ffn_hidden; no expert rows, no MLA latents)";
    return std::nullopt;
  }
  if (!s.schedule->megatron_formula) {
    why_not = fmt::format("Megatron's formula knows 1F1B and its interleaved schedule, not {}",
                          s.schedule->name);
    return std::nullopt;
  }
  if (s.zero >= 3) {
    why_not = "Megatron's formula has no ZeRO-3 (parameters sharded over DP)";
    return std::nullopt;
  }
  if (s.recompute.granularity == Recompute::Full) {
    why_not = "Megatron's formula with sequence parallelism is for selective recomputation";
    return std::nullopt;
  }
  MegatronEstimate e;
  const double bytes_per_param = s.zero == 0 ? 18.0 : 6.0 + 12.0 / d(p.dp);
  e.weights_and_optimizer = most_loaded_params(s) * bytes_per_param;

  const double sb = d(s.seq_len) * d(s.micro_batch);
  const double h = d(m.hidden);
  const double pp = d(p.pp);
  e.layer_bytes_per_token_h = 18.0 + 4.0 * d(m.ffn_hidden) / h;
  double act = sb * h * e.layer_bytes_per_token_h * d(m.layers);
  act += 8.0 * sb * pp + sb * h * pp;  // the embedding's input and its dropout
  if (s.schedule->takes_chunks) {      // interleaved
    act *= 1.0 + (pp - 1.0) / (pp * d(s.chunks));
  } else if (p.pp > 1) {
    act *= std::min(1.0, d(s.micro_batches) / pp);
  }
  if (p.pp == 1) {
    act += sb * h * 4.0 * (1.0 + d(m.vocab) / h);  // the output layer's input and the loss
  }
  e.activations = act / d(p.tp);
  return e;
}

}  // namespace hopsim::work
