// Routing as training produces it: each batch's expert popularity from the runs of alike
// tokens it holds.
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
// by that run's choice). Each batch (micro-batch, EP group) draws anew from the routing's
// seed: the popularity drifts from batch to batch. Sequences shorter than lambda cut the runs,
// so the imbalance grows with the sequence length up to lambda and with fewer tokens per group.
// The batch a run simulates stands for the step's many: of kTrainingDraws draws, the one whose
// busiest rank's share of the top-k picks (each expert's chance to be picked, capped at 1 per
// token) is nearest their mean. Cost: kTrainingDraws x E Gamma draws and sorts per batch.
#pragma once

#include <cstddef>

#include "workloads/ep/routing_spec.hpp"

namespace hopsim::work {

/// Candidate popularities a training batch draws to pick its representative one.
inline constexpr std::size_t kTrainingDraws = 32;

/// The independent choices n an EP group of `ranks` GPUs' batch routes as: ranks x
/// tokens_per_gpu / min(run_tokens, sequence_tokens (tokens_per_gpu when 0)), at least 1; also
/// the Dirichlet concentration (sum over experts) of the batch's popularity.
double independent_tokens(const MoeRouting& r, std::size_t ranks);

}  // namespace hopsim::work
