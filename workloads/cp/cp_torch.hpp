// PyTorch's context parallelism (torch.distributed.tensor.experimental.context_parallel) as
// TorchTitan runs it: the pass-KV ring of `cp.impl: "torch"` (docs/context-parallelism.md).
//
// What differs from Megatron's ring (ring_attention.hpp), read off torch's
// _templated_ring_attention and its backward:
//   calls    one SDPA call per ring step. Step 0 is the rank's own tokens, both load-balance
//            chunks concatenated, as one causal call of S/r; a later step from a rank before it
//            is its S/r queries against the first half of that block (S/2r keys), from a rank
//            after it the second half of its queries (S/2r) against the whole block, no mask
//            (enable_load_balance, the head-tail "round robin" layout); without load balance
//            (contiguous) a later rank's block is skipped;
//   K/V      what SDPA sees: TorchTitan's Llama repeats the K/V heads to the query heads
//            before SDPA (its flash backend takes no GQA), so K/V blocks carry every query
//            head; SDPA runs BF16 whatever the projections' dtype (Float8 linears);
//   rotate   allgather (torch's default): one all-gather of every block per attention call,
//            issued with step 0, which it hides behind; steps 1.. wait for it. alltoall: the
//            block shifts one rank a step, sent when it arrived, beside the step's compute;
//   merge    every later step's output is merged into an FP32 running output (the log-sum-exp
//            merge), and a backward step adds its dQ to an FP32 sum and its dK/dV to the FP32
//            partial sums that travel the ring: memory-bound kernels on the compute stream;
//   backward K/V rotate as forward; the FP32 dK/dV partial sums (twice the BF16 block) shift one
//            rank after every step, and the next step's compute waits for the one from the
//            rank before (the loop waits on it before its next SDPA call); the last comes home.
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/cp/cp_details.hpp"
#include "workloads/cp/cp_layout.hpp"

namespace hopsim::work {

class CpStage;

/// PyTorch SDPA's flash backend (FlashAttention-2 built into torch) against FlashAttention-2's
/// published rates (attention_kernel.hpp's fa2 curve, as the cluster scales it): fitted on one
/// case, TorchTitan's CP 1 row (configs/experiments/torchtitan-llama3-8b-cp1.json: no CP
/// communication, its GEMMs' half checked on TorchTitan's 8K rows), 1.086 times as fast: 1.046
/// before roofline GEMMs took their shape's efficiency (gemm_shape.hpp) and the 500 W preset's
/// factor was refitted 0.888 -> 0.837 (1.057 while that factor was 0.882); the CP 2, 4 and 8
/// rows are predictions (docs/context-parallelism.md).
inline constexpr double kSdpaFlashOverFa2 = 1.086;

/// An SDPA call's cost under impl torch: the kernel's at kSdpaFlashOverFa2 its rate.
ComputeCost torch_sdpa(ComputeCost fa2);

/// The SDPA calls rank `q` runs on the block of rank `kv` (its own at step 0), per sequence: mask
/// causal or full (no documents, no cache), the layout zigzag (load balance) or contiguous.
std::vector<AttentionCall> torch_step_calls(const CpLayout& layout, int q, int kv,
                                            AttentionMask mask);

/// Rank `q`'s calls over every step (what explain prices).
std::vector<AttentionCall> torch_position_calls(const CpLayout& layout, int q, AttentionMask mask);

/// Bytes the merge after one step moves: forward, the FP32 running output (read and written)
/// and the step's BF16 output over its query rows, plus a copy of the whole FP32 output when
/// the step wrote only its second half (torch's _partial_update rebuilds it); backward, dQ's FP32
/// sum over its rows, and the FP32 dK/dV partial sum updated, copied whole and packed to send.
struct TorchMergeBytes {
  std::int64_t forward = 0;
  std::int64_t backward = 0;
};
/// `call`: the step's SDPA call; `rows`: the tokens a rank holds (S/r); per sequence and head.
TorchMergeBytes torch_merge_bytes(const AttentionCall& call, std::int64_t rows, std::int64_t d_qk,
                                  std::int64_t d_v);

/// The CP part of one layer and pass on every GPU, PyTorch's way (counting the bytes and, with
/// `record`, the steps as the other builders do).
void attend_torch(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record);

}  // namespace hopsim::work
