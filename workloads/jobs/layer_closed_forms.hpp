// Closed forms of the CP and EP layers (hopsim explain): FLOPs per op, CP thresholds, EP bytes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topology/spec.hpp"
#include "workloads/jobs/layer_jobs.hpp"
#include "workloads/mesh/mesh.hpp"
#include "workloads/model/model.hpp"

namespace hopsim::work {

/// FLOPs of one layer on one GPU, by operation, for one pass.
using OpFlops = std::vector<std::pair<std::string, double>>;

struct LayerFlops {
  OpFlops fwd;
  OpFlops bwd;
};

/// Attention layer under TP and CP: projections, scores (causal, 2*cp-chunk balanced), and the
/// MLP when the job has it.
LayerFlops attention_layer_flops(const ModelSpec& m, const ParallelSpec& p,
                                 const AttentionLayerJob& job);
/// MoE layer under EP (balanced routing): attention over the GPU's tokens (when the job has
/// it), router, experts.
LayerFlops moe_layer_flops(const ModelSpec& m, const ParallelSpec& p, const MoeLayerJob& job);

struct CpNumbers {
  double block_threshold_nvlink_tokens = 0;  ///< F/B: below it a block's KV transfer is exposed
  double block_threshold_network_tokens = 0;
  double min_seq_per_rank_nvlink = 0;  ///< 6 blocks (Ring Attention, arXiv 2310.01889)
  double min_seq_per_rank_network = 0;
  double contiguous_work_ratio = 0;  ///< last rank / first, counting each attended block as 1
  double contiguous_flops_ratio = 0; ///< the same with a diagonal block as half a block
  double zigzag_units_per_rank = 0;  ///< 2c chunks, chunk i paired with 2c-1-i: 2c+1 each
};

/// From the cluster's GPU peak and NVLink and NIC line rates.
CpNumbers cp_numbers(const ParallelSpec& p, const topo::Spec& cluster);

struct EpNumbers {
  /// InfiniBand bytes one GPU sends: each token once per destination node, every node remote
  /// (the worst case): tokens x nodes per token x hidden x bytes/element.
  double dispatch_bytes_ib = 0;
  double combine_bytes_ib = 0;
  double fwd_bwd_bytes_ib = 0;     ///< two all-to-alls forward, two backward
  double layer_flops_per_gpu = 0;  ///< 2 x (active params / layers) x tokens
  double compute_s_at_peak = 0;
  double comm_s_at_nic = 0;  ///< dispatch + combine over one NIC
};

/// From the cluster's GPU peak and NIC line rate.
EpNumbers ep_numbers(const ModelSpec& m, const MoeLayerJob& job, const topo::Spec& cluster);

}  // namespace hopsim::work
