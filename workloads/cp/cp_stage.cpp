// The attention layer as a CP algorithm's builder sees it: rings, frontiers, ring-step costs.
#include "workloads/cp/cp_stage.hpp"

#include <algorithm>

#include "workloads/cp/cp_torch.hpp"

namespace hopsim::work {

CpStage::CpStage(const AttentionLayerJob& job, const BuildEnv& b, Plan& plan)
    : job_(job),
      b_(b),
      plan_(plan),
      d_(job.dims(*b.env.model, b.env.mesh.spec())),
      layout_(job.layout(b.env.mesh.spec().cp, b.env.seed)),
      frontier_(static_cast<std::size_t>(b.env.mesh.size())) {
  for (const std::vector<topo::GpuId>& group : b.env.mesh.groups(Dim::Cp)) {
    for (std::int64_t j = 0; j < d_.u; ++j) {  // the ring of head slice j
      std::vector<topo::GpuId> ring;
      for (std::int64_t q = 0; q < d_.r; ++q) {
        ring.push_back(group[static_cast<std::size_t>(q * d_.u + j)]);
      }
      rings_.push_back(std::move(ring));
    }
    for (std::int64_t q = 0; q < d_.r; ++q) {
      ulysses_groups_.emplace_back(group.begin() + q * d_.u, group.begin() + (q + 1) * d_.u);
    }
  }
}

TaskList CpStage::joined(std::span<const topo::GpuId> gpus) {
  TaskList all;
  for (const topo::GpuId g : gpus) {
    all.insert(all.end(), frontier(g).begin(), frontier(g).end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

PlanTaskId CpStage::compute(topo::GpuId gpu, const std::string& label, const ComputeCost& cost,
                            std::uint32_t phase) {
  const PlanTaskId id = plan_.add_compute(ComputeTask{gpu, cost.time, cost.flops, cost.source,
                                                      phase, kComputeStream, label, cost.kind});
  for (PlanTaskId d : frontier(gpu)) {
    plan_.add_dependency(d, id);
  }
  frontier(gpu) = {id};
  return id;
}

ComputeCost CpStage::step_cost(int q, int kv, Pass pass) {
  const auto key = std::make_tuple(q, kv, pass);
  const auto it = step_costs_.find(key);
  if (it != step_costs_.end()) {
    return it->second;
  }
  const std::vector<AttentionCall> step_calls = calls(q, kv);
  ComputeCost total;
  total.source = Source::Exact;
  for (const AttentionCall& c : step_calls) {
    AttentionShape s;
    s.d_qk = d_.d_qk;
    s.d_v = d_.d_v;
    s.mask = c.mask;
    s.gqa = std::max<std::int64_t>(1, d_.attn_q_heads / d_.attn_kv_heads);
    s.s_q = c.s_q;
    s.s_kv = c.s_kv;
    s.bh = job_.micro_batch * d_.attn_q_heads;
    const ComputeCost kernel = b_.compute->attention(job_.kernel_dtype(), s, pass);
    const ComputeCost one = job_.cp.impl == CpImpl::Torch ? torch_sdpa(kernel) : kernel;
    total.time += one.time;
    total.flops.n += one.flops.n;
    total.bytes = total.bytes + one.bytes;
    total.source = std::max(total.source, one.source);
  }
  if (step_calls.empty()) {
    total = ComputeCost{};
  }
  total.kind = pass == Pass::Fwd ? KernelClass::AttentionFwd : KernelClass::AttentionBwd;
  step_costs_.emplace(key, total);
  return total;
}

std::vector<AttentionCall> CpStage::calls(int q, int kv) const {
  if (kv < 0) {
    return layout_.calls_all_keys(q);
  }
  return job_.cp.impl == CpImpl::Torch ? torch_step_calls(layout_, q, kv, job_.mask)
                                       : layout_.calls(q, kv);
}

ComputeCost CpStage::merge_cost(int q, int kv, Pass pass) {
  std::int64_t bytes = 0;
  for (const AttentionCall& c : calls(q, kv)) {
    const TorchMergeBytes m = torch_merge_bytes(c, layout_.tokens_per_position(), d_.d_qk, d_.d_v);
    bytes += pass == Pass::Fwd ? m.forward : m.backward;
  }
  return copy_cost(bytes * job_.micro_batch * d_.attn_q_heads, pass);
}

TeMergeBytes CpStage::te_merge(int q) const {
  return te_merge_bytes(te_merge_shape(job_, d_, layout_), q, static_cast<int>(d_.r));
}

ComputeCost CpStage::copy_cost(std::int64_t bytes, Pass pass) const {
  ComputeCost cost = b_.compute->memory(KernelClass::Copy, Bytes{bytes}, pass);
  cost.kind = KernelClass::Copy;
  return cost;
}

// Every position holds as many tokens (and as many cached ones).
std::int64_t CpStage::kv_block_bytes() const {
  return job_.kv_block_bytes(d_, layout_);
}

std::int64_t CpStage::q_block_bytes() const {
  return layout_.tokens_per_position() * job_.micro_batch * d_.attn_q_heads * d_.d_qk * d_.elem;
}

std::int64_t CpStage::output_bytes() const {
  return layout_.tokens_per_position() * job_.micro_batch * d_.attn_q_heads * (d_.d_v * 2 + 4);
}

}  // namespace hopsim::work
