// Transformer Engine's pass-KV ring (AttnFuncWithCPAndKVP2P in
// transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py, the function
// Megatron's cp_comm_type "p2p" runs) spends memory-bound kernels on the compute stream beside
// its attention calls (docs/context-parallelism.md#transformer-engines-merges):
//   forward   K and V concatenated into the first send buffer (torch.cat); after the ring, each
//             step's output merged into the layer's output by its log-sum-exp correction: step
//             0's written scaled (read one BF16 output, write one), each later step's added (read
//             the output and the step's, write the output), over all of the rank's query rows,
//             or over the second half only where the step attended a later rank's block (causal
//             load balance); the softmax statistics merged alike (FP32, one per row and head);
//   backward  K/V copied into the backward's send buffer; after each step, its dQ copied or
//             added into dQ and its dK/dV into the partial sums that travel the ring (BF16: a
//             copy reads and writes, an add reads two and writes one), over the rows the step
//             touched: a later rank's block gives half the query rows, an earlier rank's half
//             the key rows.
// Transformer Engine's backward takes the blocks in the order rank + 1, rank + 2, ..., its own
// last; step i there is the block of rank (rank + i + 1) mod r.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/cp/attention_layer_job.hpp"
#include "workloads/cp/cp_layout.hpp"

namespace hopsim::work {

/// The shapes the merges read, per GPU: rows (query tokens a ring position holds, all
/// sequences), heads inside attention, head dimensions.
struct TeMergeShape {
  std::int64_t rows = 0;
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t d_qk = 0;
  std::int64_t d_v = 0;
  bool causal = true;  ///< the load-balanced causal layout (else every step is whole)
};

/// Bytes the merges of ring position `rank` of `r` (r > 1) move (BF16 outputs and gradients).
struct TeMergeBytes {
  std::int64_t fwd_merge = 0;  ///< output and softmax-statistics corrections after the ring
  /// Per backward step i of Transformer Engine's order (the block of rank (rank + i + 1) mod r):
  /// its dQ and dK/dV copied or added.
  std::vector<std::int64_t> bwd_step;
};

TeMergeBytes te_merge_bytes(const TeMergeShape& s, int rank, int r);

/// Whether the layer's CP runs Transformer Engine's pass-KV ring: `cp.impl` megatron, a ring
/// of more than one position (algorithm ring, or ulysses' ring of its groups).
bool te_pass_kv_ring(const AttentionLayerJob& job, const AttentionDims& d);

/// The merges' shape of `job` on one GPU.
TeMergeShape te_merge_shape(const AttentionLayerJob& job, const AttentionDims& d,
                            const CpLayout& layout);

/// Bytes of the K/V copy into the first send buffer, forward and backward: one position's K and
/// V block (cached keys included) read and written.
std::int64_t te_kv_pack_bytes(const AttentionLayerJob& job, const AttentionDims& d,
                              const CpLayout& layout);

}  // namespace hopsim::work
