// What a MoE layer's report needs beyond the generic summary: the routing's load per expert
// and per rank, and how far tokens travel. Times come from the run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hopsim::work {

struct EpDetails {
  std::int64_t degree = 1;         ///< GPUs per EP group
  std::int64_t groups = 1;         ///< EP groups in the mesh (each routes its own tokens)
  std::int64_t micro_batches = 1;  ///< 2 with two_microbatch overlap
  /// EP group 0, all micro-batches: (token, expert) selections per expert, and per rank the
  /// rows its experts receive.
  std::vector<std::int64_t> tokens_per_expert;
  std::vector<std::int64_t> tokens_per_rank;
  double nodes_per_token_mean = 0;  ///< distinct nodes a token's experts are on
  double gpus_per_token_mean = 0;   ///< distinct GPUs a token's experts are on
  double compute_slowdown = 1;      ///< SMs / (SMs - comm_sms): a kernel wholly beside an exchange
  /// With overlap: the share of a GPU's HBM bandwidth the exchanges draw while it computes,
  /// which its memory-bound kernels lose (workloads/ep/hbm_sharing.hpp); else 0.
  double hbm_share = 0;
  /// EP group 0, all micro-batches: (token, expert) selections the router made, and those the
  /// capacity limit dropped.
  std::int64_t selections = 0;
  std::int64_t dropped = 0;
  /// With the bias balancer, EP group 0: max / mean of the GPUs' expert rows at each training
  /// step before the simulated one.
  std::vector<double> balance_steps;
  /// EP group 0: per rank, the experts of its slots (a redundant copy is an expert on two).
  std::vector<std::vector<int>> placement;
  /// Of the job's identical layers in a row, how many were simulated: the rest repeat the last
  /// one's figures when the schedule is steady (docs/expert-parallelism.md#layers).
  std::int64_t layers_simulated = 1;
};

/// max / mean of `v` (0 when empty or all zero).
double max_over_mean(const std::vector<std::int64_t>& v);

}  // namespace hopsim::work
