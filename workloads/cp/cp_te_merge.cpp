// Transformer Engine's pass-KV ring merges (cp_te_merge.hpp), read off its forward and backward.
#include "workloads/cp/cp_te_merge.hpp"

namespace hopsim::work {
namespace {

constexpr std::int64_t kBf16 = 2;
constexpr std::int64_t kFp32 = 4;

// A copy reads and writes one tensor; an add reads two and writes one.
constexpr std::int64_t kCopy = 2;
constexpr std::int64_t kAdd = 3;

// dQ after backward step i: the block of rank (rank + i + 1) mod r.
std::int64_t dq_passes_x2(const TeMergeShape& s, int rank, int r, int i) {
  if (!s.causal) {
    return 2 * (i == 0 ? kCopy : kAdd);
  }
  const int first_lower = r - rank - 1;  // from here on the block is an earlier rank's or own
  if (i > first_lower) {
    return 2 * kAdd;  // every query row
  }
  if (i == first_lower) {
    // The first step that reaches the first half: it is copied, the second half added to (the
    // last rank starts here, with nothing before: the whole copied).
    return rank == r - 1 ? 2 * kCopy : kCopy + kAdd;
  }
  return i == 0 ? kCopy : kAdd;  // a later rank's block: the second half of the rows
}

// dK/dV after backward step i.
std::int64_t dkv_passes_x2(const TeMergeShape& s, int rank, int r, int i) {
  if (!s.causal) {
    return 2 * (i == 0 ? kCopy : kAdd);
  }
  if (i == r - 1) {  // its own block, whole; rank 0's second half arrives untouched
    return rank == 0 ? kAdd + kCopy : 2 * kAdd;
  }
  if (i >= r - rank - 1) {  // an earlier rank's block: its first half of the keys
    return i == 0 && rank == r - 1 ? kCopy : kAdd;
  }
  return 2 * (i == 0 ? kCopy : kAdd);  // a later rank's block, whole
}

}  // namespace

TeMergeBytes te_merge_bytes(const TeMergeShape& s, int rank, int r) {
  const std::int64_t out = s.rows * s.q_heads * s.d_v * kBf16;
  const std::int64_t lse = s.rows * s.q_heads * kFp32;
  const std::int64_t dq = s.rows * s.q_heads * s.d_qk * kBf16;
  const std::int64_t dkv = s.rows * s.kv_heads * (s.d_qk + s.d_v) * kBf16;
  TeMergeBytes b;
  // Step 0 scaled into the output, its statistics cloned; each later step added, over every
  // row or (a later rank's block) the second half's.
  b.fwd_merge = kCopy * out + kCopy * lse;
  for (int i = 1; i < r; ++i) {
    const std::int64_t halves = !s.causal || i <= rank ? 2 : 1;
    b.fwd_merge += kAdd * (out + lse) * halves / 2;
  }
  for (int i = 0; i < r; ++i) {
    b.bwd_step.push_back((dq * dq_passes_x2(s, rank, r, i) + dkv * dkv_passes_x2(s, rank, r, i)) /
                         2);
  }
  return b;
}

bool te_pass_kv_ring(const AttentionLayerJob& job, const AttentionDims& d) {
  const CpAlgorithm a = job.cp.algorithm;
  return job.cp.impl == CpImpl::Megatron && d.r > 1 &&
         (a == CpAlgorithm::Ring || a == CpAlgorithm::Ulysses);
}

TeMergeShape te_merge_shape(const AttentionLayerJob& job, const AttentionDims& d,
                            const CpLayout& layout) {
  TeMergeShape shape;
  shape.rows = layout.tokens_per_position() * job.micro_batch;
  shape.q_heads = d.attn_q_heads;
  shape.kv_heads = d.attn_kv_heads;
  shape.d_qk = d.d_qk;
  shape.d_v = d.d_v;
  shape.causal = job.mask != AttentionMask::Full;
  return shape;
}

std::int64_t te_kv_pack_bytes(const AttentionLayerJob& job, const AttentionDims& d,
                              const CpLayout& layout) {
  return 2 * job.kv_block_bytes(d, layout);  // read and written
}

}  // namespace hopsim::work
