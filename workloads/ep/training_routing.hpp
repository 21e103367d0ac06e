// Routing as training produces it: each batch's expert popularity from the runs of alike
// tokens it holds, shrunk toward even by the balancer that left it.
//
// The process (docs/expert-parallelism.md#training-routing). A balancer (DeepSeek-V3's bias,
// or an auxiliary loss) keeps every expert's load even over many steps, so the long-run
// popularity is uniform; but it acts on the next step, after this batch's tokens have routed,
// so what the batch itself holds is its residual. Tokens do not choose independently:
// neighbouring tokens of a sequence (one document, one subject) choose alike, in runs of about
// lambda tokens (`run_tokens`, the one fitted parameter), and a run ends with its sequence. An
// EP group's batch of T tokens (ranks x tokens_per_gpu) then routes as if only
// n = T / min(lambda, sequence_tokens) tokens chose independently: its popularity is a draw
// m ~ Dirichlet(n / E, ..., n / E), whose shares vary as those of n independent choices do
// (Var m_e = p (1 - p) / (n + 1), p = 1 / E); n is at least 1 (a group inside one run routes
// by that run's choice). lambda was fitted under an auxiliary loss (Megatron's zoo rows); the
// bias balancer leaves s = kBiasResidualScale of that deviation: m'_e = p + s (m_e - p), so
// Var m'_e = s^2 p (1 - p) / (n + 1), and every max-over-mean excess (an expert's MaxVio, a
// GPU's block of experts) shrinks by s. Each batch (micro-batch, EP group) draws anew from the
// routing's seed: the popularity drifts from batch to batch. Sequences shorter than lambda cut
// the runs, so the imbalance grows with the sequence length up to lambda and with fewer tokens
// per group. The batch a run simulates stands for the step's many: of kTrainingDraws draws,
// the one whose busiest rank's share of the top-k picks (each expert's chance to be picked,
// capped at 1 per token) is nearest their mean. Cost: kTrainingDraws x E Gamma draws and sorts
// per batch.
#pragma once

#include <cstddef>
#include <string_view>

#include "workloads/ep/routing_spec.hpp"

namespace hopsim::work {

/// Candidate popularities a training batch draws to pick its representative one.
inline constexpr std::size_t kTrainingDraws = 32;

/// MaxVio_global (max expert load over the mean, minus 1, over the validation set) of the 3B
/// model, the largest, in Wang et al., "Auxiliary-Loss-Free Load Balancing Strategy for
/// Mixture-of-Experts" (arXiv 2408.15664), Table 2: the auxiliary loss ("Loss-Controlled")
/// and the per-expert bias ("Loss-Free"), same model and data.
inline constexpr double kAuxLossMaxVio = 0.52;
inline constexpr double kBiasMaxVio = 0.04;

/// The bias balancer's residual over the auxiliary loss's: MaxVio is linear in the deviation
/// from even, so their MaxVio ratio is the factor s on the deviation (0.077).
inline constexpr double kBiasResidualScale = kBiasMaxVio / kAuxLossMaxVio;

/// The independent choices n an EP group of `ranks` GPUs' batch routes as: ranks x
/// tokens_per_gpu / min(run_tokens, sequence_tokens (tokens_per_gpu when 0)), at least 1; also
/// the Dirichlet concentration (sum over experts) of the batch's popularity.
double independent_tokens(const MoeRouting& r, std::size_t ranks);

/// s: 1 for the auxiliary loss (the fit's), kBiasResidualScale for the bias.
double residual_scale(const MoeRouting& r);

/// Var m'_e of one expert's share of a batch's draw: s^2 p (1 - p) / (n + 1), p = 1 / E.
double share_variance(const MoeRouting& r, std::size_t ranks);

/// "aux_loss", "bias".
std::string_view residual_balancer_name(ResidualBalancer b);

/// Where the routing's parameters come from: the run length's fitted case (or "given"), and
/// for the bias its residual scale's published figure.
std::string_view parameter_source(const MoeRouting& r);

}  // namespace hopsim::work
