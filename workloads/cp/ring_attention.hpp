// Ring attention as plan tasks: blocks rotate around r ring positions while each position
// computes on the block it holds (compute and transfers on separate streams, so overlap is
// simulated, not assumed).
//
// Pass-KV forward, step j = 0..r-1: position p computes its queries against the K/V block of
// position (p - j) mod r, while it sends the block it holds to p + 1 (steps 0..r-2). As in
// Megatron's loop, a step's transfer starts once the sender has the block and both ends have
// finished the previous step's compute (two buffers: the receiver's is free again).
// Pass-KV backward: the same K/V rotation; each position adds its share of dK/dV to the partial
// sums that travel with the block (sent after its compute, and after the partial sum arrived),
// and the last hop brings each block's dK/dV home.
// Pass-Q forward (Meta's, for few new tokens against a long cached context): the queries rotate
// instead; each position computes the visiting queries against its own K/V, and after the last
// step an all-to-all sends each partial output and its softmax statistics back to their owner
// (Meta's pass-Q, arXiv 2411.01783), who merges them.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "workloads/plan/plan.hpp"

namespace hopsim::work {

/// What position p computes at step j (the block of position (p - j) mod r for pass-KV, the
/// queries of that position for pass-Q). A task with no duration and no FLOPs means nothing to
/// compute (a masked-out block): the step still forwards the block.
using StepCompute = std::function<ComputeTask(int p, int j)>;

struct RingInput {
  std::span<const topo::GpuId> gpus;  ///< ring order: position p is gpus[p]
  /// Per position: tasks that must end before it starts (the layer so far).
  std::span<const std::vector<PlanTaskId>> ready;
  StepCompute compute;
  /// Bytes of the block that originates at position p (its K and V, or its queries).
  std::function<std::int64_t(int p)> block_bytes;
  /// Pass-KV backward: what position p computes after step j to add the step's gradients into
  /// their sums (unset: nothing). It waits for the dK/dV partial sum it adds to; the sum it sends
  /// on and p's next step wait for it, as in Transformer Engine's loop (cp_te_merge.hpp).
  StepCompute merge;
  /// The share of its link's rate a transfer from GPU a to GPU b reaches (unset: 1).
  std::function<double(topo::GpuId a, topo::GpuId b)> efficiency;
  std::uint32_t phase = 0;
};

/// Per position and step: the compute task and the transfer it sends (pass-Q: also the partial
/// output it returns), and per position what ends its part.
struct RingTasks {
  std::vector<std::vector<PlanTaskId>> compute;  ///< [p][j]
  std::vector<std::vector<PlanTaskId>> send;     ///< [p][j], j < r - 1 (pass-KV backward: r)
  std::vector<std::vector<PlanTaskId>> done;     ///< [p]
  std::vector<std::vector<PlanTaskId>> returned; ///< [p] pass-Q: its outputs' all-to-all flows
  std::vector<std::vector<PlanTaskId>> merge;     ///< [p][j] with RingInput::merge
};

RingTasks ring_pass_kv_forward(Plan& plan, const RingInput& in);
/// `in.block_bytes` is the K/V block; its dK/dV partial sums are as large.
RingTasks ring_pass_kv_backward(Plan& plan, const RingInput& in);
/// `output_bytes(p)`: the partial output and statistics of position p's queries.
RingTasks ring_pass_q_forward(Plan& plan, const RingInput& in,
                              const std::function<std::int64_t(int p)>& output_bytes);

}  // namespace hopsim::work
