// The ring CP algorithms (cp_algorithms.hpp): pass-KV (ring), whose K/V blocks travel round
// the ring under the attention of the block before, and pass-Q (ring_pass_q, prefill), whose
// queries travel and whose partial outputs come back (ring_attention.hpp has the DAGs).
#include <vector>

#include "workloads/cp/cp_algorithms.hpp"
#include "workloads/cp/cp_stage.hpp"
#include "workloads/cp/ring_attention.hpp"

namespace hopsim::work {
namespace {

// Transformer Engine's merges of each ring position (cp_te_merge.hpp).
std::vector<TeMergeBytes> te_merges(const CpStage& s, int r) {
  std::vector<TeMergeBytes> out;
  for (int p = 0; p < r; ++p) {
    out.push_back(s.te_merge(p));
  }
  return out;
}

// The backward's dQ and dK/dV sums after step j at p: hopsim's step j is the block of p - j,
// Transformer Engine's step r - 1 - j.
StepCompute te_sums(const CpStage& s, const std::vector<topo::GpuId>& ring,
                    const std::vector<TeMergeBytes>& merges, std::uint32_t phase) {
  const auto r = static_cast<int>(ring.size());
  return [&s, &ring, &merges, phase, r](int p, int j) {
    const ComputeCost c = s.copy_cost(
        merges[static_cast<std::size_t>(p)].bwd_step[static_cast<std::size_t>(r - 1 - j)],
        Pass::Bwd);
    return ComputeTask{ring[static_cast<std::size_t>(p)], c.time, c.flops, c.source, phase,
                       kComputeStream, "cp dq dkv sum", c.kind};
  };
}

// One ring's stage: its GPUs' ring steps after their frontiers, which become its last steps.
// With `record` (the first layer's forward), each GPU's step tasks; the first ring counts the
// bytes one GPU sends.
void ring_stage(CpStage& s, const std::vector<topo::GpuId>& ring, Pass pass, std::uint32_t phase,
                CpDetails* record, bool pass_q) {
  const auto r = static_cast<int>(ring.size());
  const bool fwd = pass == Pass::Fwd;
  const bool counting = record != nullptr && ring == s.rings().front();
  // Transformer Engine's pass-KV ring: K and V packed into the send buffer first, its merges
  // after each backward step and after the forward ring (cp_te_merge.hpp).
  const bool te = !pass_q && te_pass_kv_ring(s.job(), s.dims());
  std::vector<TaskList> ready;
  for (const topo::GpuId g : ring) {
    if (te) {
      s.compute(g, "cp kv pack",
                s.copy_cost(te_kv_pack_bytes(s.job(), s.dims(), s.layout()), pass), phase);
    }
    ready.push_back(s.frontier(g));
  }
  RingInput in;
  in.gpus = ring;
  in.ready = ready;
  in.phase = phase;
  in.compute = [&](int p, int j) {
    const int origin = ((p - j) % r + r) % r;
    // Pass-KV: p's queries against origin's keys; pass-Q: origin's queries against p's.
    const ComputeCost c = pass_q ? s.step_cost(origin, p, pass) : s.step_cost(p, origin, pass);
    return ComputeTask{ring[static_cast<std::size_t>(p)], c.time, c.flops, c.source, phase,
                       kComputeStream, "attention", c.kind};
  };
  in.block_bytes = [&](int) { return pass_q ? s.q_block_bytes() : s.kv_block_bytes(); };
  const std::vector<TeMergeBytes> merges = te ? te_merges(s, r) : std::vector<TeMergeBytes>{};
  if (te && !fwd) {
    in.merge = te_sums(s, ring, merges, phase);
  }
  const BuildEnv& b = s.build_env();
  in.efficiency = [&](topo::GpuId x, topo::GpuId y) {
    return b.cluster.node_of(x) == b.cluster.node_of(y) ? 1.0 : b.env.nccl.p2p_net_efficiency;
  };
  const RingTasks tasks =
      pass_q ? ring_pass_q_forward(s.plan(), in, [&](int) { return s.output_bytes(); })
      : fwd  ? ring_pass_kv_forward(s.plan(), in)
             : ring_pass_kv_backward(s.plan(), in);
  for (int p = 0; p < r; ++p) {
    const topo::GpuId g = ring[static_cast<std::size_t>(p)];
    s.frontier(g) = tasks.done[static_cast<std::size_t>(p)];
    if (te && fwd) {
      s.compute(g, "cp merge", s.copy_cost(merges[static_cast<std::size_t>(p)].fwd_merge, pass),
                phase);
    }
    if (record != nullptr && fwd) {
      record->step_compute[g.index()] = tasks.compute[static_cast<std::size_t>(p)];
      record->step_send[g.index()] = tasks.send[static_cast<std::size_t>(p)];
      record->step_output[g.index()] = tasks.returned[static_cast<std::size_t>(p)];
    }
  }
  if (counting && r > 1) {
    s.count_bytes((r - 1) * in.block_bytes(0) + (pass_q ? (r - 1) * s.output_bytes() : 0));
  }
}

// A position's calls against every position, one after another: its queries against their keys
// (pass-KV, Ulysses' ring), or their queries against its keys (pass-Q).
std::vector<AttentionCall> ring_calls(const CpLayout& layout, int position, bool pass_q) {
  std::vector<AttentionCall> out;
  for (int other = 0; other < layout.ring(); ++other) {
    const std::vector<AttentionCall> step =
        pass_q ? layout.calls(other, position) : layout.calls(position, other);
    out.insert(out.end(), step.begin(), step.end());
  }
  return out;
}

}  // namespace

void attend_ring(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record) {
  for (const std::vector<topo::GpuId>& ring : stage.rings()) {
    ring_stage(stage, ring, pass, phase, record, false);
  }
}

void attend_ring_pass_q(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record) {
  for (const std::vector<topo::GpuId>& ring : stage.rings()) {
    ring_stage(stage, ring, pass, phase, record, true);
  }
}

std::vector<AttentionCall> pass_kv_calls(const CpLayout& layout, int position) {
  return ring_calls(layout, position, false);
}

std::vector<AttentionCall> pass_q_calls(const CpLayout& layout, int position) {
  return ring_calls(layout, position, true);
}

}  // namespace hopsim::work
