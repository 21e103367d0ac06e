// The attention layer being built as a CP algorithm's builder sees it (cp_algorithms.hpp):
// the plan, the layer's dimensions and token layout, its CP rings and Ulysses groups, each
// GPU's frontier, and the costs and bytes of a ring step.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "workloads/cp/attention_builder.hpp"
#include "workloads/cp/cp_te_merge.hpp"

namespace hopsim::work {

class CpStage {
 public:
  CpStage(const AttentionLayerJob& job, const BuildEnv& b, Plan& plan);

  const AttentionLayerJob& job() const { return job_; }

  const BuildEnv& build_env() const { return b_; }

  Plan& plan() { return plan_; }

  const AttentionDims& dims() const { return d_; }

  const CpLayout& layout() const { return layout_; }

  /// The CP rings, one per head slice of each CP group (GPU 0's first); the Ulysses groups
  /// (all-to-all groups of dims().u ranks) inside each CP group.
  const std::vector<std::vector<topo::GpuId>>& rings() const { return rings_; }

  const std::vector<std::vector<topo::GpuId>>& ulysses_groups() const { return ulysses_groups_; }

  /// Per GPU: what its next task waits for.
  TaskList& frontier(topo::GpuId gpu) { return frontier_[gpu.index()]; }

  std::vector<TaskList>& frontier() { return frontier_; }

  /// Every frontier of `gpus`, once each.
  TaskList joined(std::span<const topo::GpuId> gpus);
  /// A compute task on `gpu` after its frontier, which it becomes.
  PlanTaskId compute(topo::GpuId gpu, const std::string& label, const ComputeCost& cost,
                     std::uint32_t phase);

  /// Attention of position q's queries against position kv's keys (kv < 0: every key at once),
  /// one GPU's heads; computed once per (q, kv, pass).
  ComputeCost step_cost(int q, int kv, Pass pass);
  /// Impl torch: the merge after position q's step on kv's block (forward: into the FP32
  /// output; backward: the dQ and dK/dV sums), a memory-bound kernel (cp_torch.hpp).
  ComputeCost merge_cost(int q, int kv, Pass pass);
  /// Impl megatron, a pass-KV ring of more than one position: Transformer Engine's merges around
  /// position q's attention (cp_te_merge.hpp), memory-bound kernels.
  TeMergeBytes te_merge(int q) const;
  /// A memory-bound kernel of `bytes` (class Copy) in `pass`.
  ComputeCost copy_cost(std::int64_t bytes, Pass pass) const;
  /// Bytes of one position's K and V block (cached keys included), queries, and partial output
  /// (BF16) with its softmax statistics (FP32 per query and head), for one GPU's heads.
  std::int64_t kv_block_bytes() const;
  std::int64_t q_block_bytes() const;
  std::int64_t output_bytes() const;

  /// CP bytes one GPU sends in one layer's forward pass, as the builders count them.
  void count_bytes(std::int64_t bytes) { cp_bytes_fwd_ += bytes; }

  std::int64_t cp_bytes_fwd() const { return cp_bytes_fwd_; }

 private:
  const AttentionLayerJob& job_;
  const BuildEnv& b_;
  Plan& plan_;
  AttentionDims d_;
  CpLayout layout_;
  std::vector<TaskList> frontier_;
  std::vector<std::vector<topo::GpuId>> rings_;
  std::vector<std::vector<topo::GpuId>> ulysses_groups_;
  std::map<std::tuple<int, int, Pass>, ComputeCost> step_costs_;
  std::vector<AttentionCall> calls(int q, int kv) const;
  std::int64_t cp_bytes_fwd_ = 0;
};

}  // namespace hopsim::work
