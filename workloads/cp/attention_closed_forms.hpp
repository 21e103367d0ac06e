// Closed forms and kernel costs of the attention layer (hopsim explain, and the CP numbers).
#pragma once

#include "topology/spec.hpp"
#include "workloads/costs/layer_costs.hpp"
#include "workloads/cp/attention_layer_job.hpp"
#include "workloads/mesh/mesh.hpp"

namespace hopsim::work {

/// The kernels around attention itself, on one GPU, per pass (LayerCosts' order):
///   before  norm, QKV projection (with its FP8 casts), rotary (none under MLA's own)
///   after   attention backward's pre- and post-pass, output projection, residual add
///   mlp     norm, gate+up, SwiGLU, down, residual add (when the job has the MLP)
/// Norms and residual adds run on the GPU's sequence-parallel share (tokens / tp).
struct AttentionLayerKernels {
  LayerCosts before;
  LayerCosts after;
  LayerCosts mlp;
};
AttentionLayerKernels attention_layer_kernels(const ModelSpec& m, const ParallelSpec& p,
                                              const AttentionLayerJob& job,
                                              const ComputeModel& model);

/// Attention layer under TP and CP: the kernels above, and between them ring position 0's
/// attention calls as the simulation runs them (its CP layout; `seed` draws document lengths).
LayerCosts attention_layer_costs(const ModelSpec& m, const ParallelSpec& p,
                                 const AttentionLayerJob& job, const ComputeModel& model,
                                 std::uint64_t seed);

/// Attention layer under TP and CP: projections, scores (causal, 2*cp-chunk balanced), and the
/// MLP when the job has it.
LayerFlops attention_layer_flops(const ModelSpec& m, const ParallelSpec& p,
                                 const AttentionLayerJob& job);
struct CpNumbers {
  double block_threshold_nvlink_tokens = 0;  ///< F/B: below it a block's KV transfer is exposed
  double block_threshold_network_tokens = 0;
  double min_seq_per_rank_nvlink = 0;  ///< 6 blocks (Ring Attention, arXiv 2310.01889)
  double min_seq_per_rank_network = 0;
  double contiguous_work_ratio = 0;  ///< last rank / first, counting each attended block as 1
  double contiguous_flops_ratio = 0; ///< the same with a diagonal block as half a block
  /// 2c chunks, chunk i paired with 2c-1-i: 2c+1 each (1 at c = 1: one chunk)
  double zigzag_units_per_rank = 0;
};

/// From the cluster's GPU peak and NVLink and NIC line rates.
CpNumbers cp_numbers(const ParallelSpec& p, const topo::Spec& cluster);

}  // namespace hopsim::work
