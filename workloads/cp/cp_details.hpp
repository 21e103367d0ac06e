// What a CP layer's report needs beyond the generic summary: the balance arithmetic, the
// overlap threshold, and which tasks are which ring step (their times come from the run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/plan/plan.hpp"

namespace hopsim::work {

struct CpDetails {
  std::string algorithm;
  std::string impl;           ///< "megatron" or "torch" (cp.impl)
  std::string rotate_method;  ///< impl torch: "allgather" or "alltoall"; else empty
  std::string balance;
  std::int64_t degree = 1;
  std::int64_t ulysses_degree = 1;
  std::int64_t ring_degree = 1;
  std::int64_t block_tokens = 0;     ///< tokens of one chunk
  std::int64_t tokens_per_rank = 0;  ///< new tokens per CP rank (per sequence)
  /// Per ring position: chunk pairs with attended pairs (the seeds' unit), and the exact
  /// forward attention FLOPs of one GPU there.
  std::vector<int> work_units_per_rank;
  std::vector<double> flops_per_rank;
  /// F / B for this GPU's peak and the link the ring uses, with the model's K/V share:
  /// a full block of more tokens than this hides its transfer.
  double overlap_threshold_tokens = 0;
  std::string ring_link;  ///< "nvlink" or "network"
  double min_seq_per_rank = 0;  ///< 6 blocks at the threshold (Ring Attention)
  /// Bytes one GPU sends per layer, forward, for CP (K/V or queries, all-to-alls, gathers).
  std::int64_t cp_bytes_per_gpu_fwd = 0;
  /// Layer 0, forward, per GPU (empty for GPUs outside the mesh): the compute task of each ring
  /// step and the transfer it sends (none on the last step).
  std::vector<std::vector<PlanTaskId>> step_compute;
  std::vector<std::vector<PlanTaskId>> step_send;
  /// Pass-Q, layer 0, per GPU: the all-to-all flows that bring its queries' partial outputs home.
  std::vector<std::vector<PlanTaskId>> step_output;
  /// The GPU whose steps the report shows: in GPU 0's ring, the position with the most
  /// attention work (the one the others wait for).
  int steps_gpu = 0;
};

}  // namespace hopsim::work
