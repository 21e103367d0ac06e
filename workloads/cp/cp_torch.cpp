// PyTorch's context parallelism as TorchTitan runs it (cp_torch.hpp).
#include "workloads/cp/cp_torch.hpp"

#include <fmt/format.h>

#include "workloads/collectives/collectives.hpp"
#include "workloads/cp/cp_stage.hpp"

namespace hopsim::work {

std::vector<AttentionCall> torch_step_calls(const CpLayout& layout, int q, int kv,
                                            AttentionMask mask) {
  const std::int64_t n = layout.tokens_per_position();
  const bool causal = mask == AttentionMask::Causal;
  if (q == kv) {  // step 0: the rank's own tokens, one call
    return {causal ? AttentionCall{n, n, Mask::CausalTopLeft, n * (n + 1) / 2}
                   : AttentionCall{n, n, Mask::None, n * n}};
  }
  if (!causal) {
    return {{n, n, Mask::None, n * n}};
  }
  if (layout.chunks(q).size() == 2) {  // load balance: half the block, or half the queries
    const std::int64_t h = n / 2;
    return {kv < q ? AttentionCall{n, h, Mask::None, n * h} : AttentionCall{h, n, Mask::None, h * n}};
  }
  if (kv < q) {  // contiguous: an earlier rank's block in full, a later one skipped
    return {{n, n, Mask::None, n * n}};
  }
  return {};
}

ComputeCost torch_sdpa(ComputeCost fa2) {
  fa2.time = Time::from_seconds(fa2.time.seconds() / kSdpaFlashOverFa2);
  return fa2;
}

std::vector<AttentionCall> torch_position_calls(const CpLayout& layout, int q, AttentionMask mask) {
  std::vector<AttentionCall> out;
  for (int kv = 0; kv < layout.ring(); ++kv) {
    const std::vector<AttentionCall> step = torch_step_calls(layout, q, kv, mask);
    out.insert(out.end(), step.begin(), step.end());
  }
  return out;
}

TorchMergeBytes torch_merge_bytes(const AttentionCall& call, std::int64_t rows, std::int64_t d_qk,
                                  std::int64_t d_v) {
  constexpr std::int64_t kFp32 = 4;
  constexpr std::int64_t kBf16 = 2;
  const bool half_queries = call.s_q < rows;  // torch's "partial": the second half's rows
  const bool half_keys = call.s_kv < rows;    // the first half of the block's dK/dV
  TorchMergeBytes b;
  // out <- out - sigmoid(lse_b - lse) (out - out_b): FP32 out read and written, BF16 out_b read.
  b.forward = call.s_q * d_v * (2 * kFp32 + kBf16) + (half_queries ? rows * d_v * 2 * kFp32 : 0);
  // dQ += dQ_b (FP32 += BF16), whole again after a partial update.
  b.backward = call.s_q * d_qk * (2 * kFp32 + kBf16) + (half_queries ? rows * d_qk * 2 * kFp32 : 0);
  // dK/dV: the received FP32 sum plus this step's over the keys it attended, rebuilt whole
  // after a partial update, then packed (torch.cat) to send on.
  const std::int64_t kv = d_qk + d_v;
  b.backward += call.s_kv * kv * (2 * kFp32 + kBf16) + (half_keys ? rows * kv * 2 * kFp32 : 0) +
                rows * kv * 2 * kFp32;
  return b;
}

namespace {

using Tasks = std::vector<PlanTaskId>;

// One ring of one layer and pass, PyTorch's way: per position its step computes, each later
// step's merge, the K/V rotation and (backward) the dK/dV partial sums.
class TorchRing {
 public:
  TorchRing(CpStage& s, const std::vector<topo::GpuId>& ring, Pass pass, std::uint32_t phase)
      : s_(s), ring_(ring), pass_(pass), phase_(phase), r_(static_cast<int>(ring.size())) {
    for (const topo::GpuId g : ring) {
      at_.push_back(s.frontier(g));
    }
    steps_.resize(ring.size());
    sends_.assign(ring.size(), Tasks(ring.size(), PlanTaskId{}));
    dkv_.assign(ring.size(), Tasks(ring.size(), PlanTaskId{}));
  }

  void run(CpDetails* record, bool counting) {
    rotate_kv();
    for (int j = 0; j < r_; ++j) {
      for (int p = 0; p < r_; ++p) {
        step(p, j);
      }
    }
    for (int p = 0; p < r_; ++p) {
      const topo::GpuId g = ring_[static_cast<std::size_t>(p)];
      s_.frontier(g) = at_[static_cast<std::size_t>(p)];
      if (pass_ == Pass::Bwd && r_ > 1) {  // the last dK/dV partial sum comes home
        s_.frontier(g).push_back(
            dkv_[static_cast<std::size_t>(prev(p))][static_cast<std::size_t>(r_ - 1)]);
      }
      if (record != nullptr && pass_ == Pass::Fwd) {
        record->step_compute[g.index()] = steps_[static_cast<std::size_t>(p)];
        record->step_send[g.index()] =
            s_.job().cp.rotate == CpRotate::AllToAll
                ? Tasks(sends_[static_cast<std::size_t>(p)].begin(),
                        sends_[static_cast<std::size_t>(p)].end() - 1)
                : Tasks{};
      }
    }
    if (counting && r_ > 1) {
      s_.count_bytes((r_ - 1) * s_.kv_block_bytes());
    }
  }

 private:
  CpStage& s_;
  const std::vector<topo::GpuId>& ring_;
  Pass pass_;
  std::uint32_t phase_;
  int r_;
  std::vector<Tasks> at_;     // per position: what its next compute starts after
  std::vector<Tasks> steps_;  // per position: its steps' SDPA calls
  std::vector<Tasks> sends_;  // alltoall: [p][j], p's block-of-step-j send to p + 1
  Tasks gathered_;            // allgather: every block present
  std::vector<Tasks> dkv_;    // backward: [p][j], p's FP32 dK/dV partial sum after step j

  int prev(int p) const { return (p + r_ - 1) % r_; }
  int next(int p) const { return (p + 1) % r_; }
  topo::GpuId gpu(int p) const { return ring_[static_cast<std::size_t>(p)]; }

  PlanTaskId flow(int from, std::int64_t bytes, std::string_view what, int j, const Tasks& deps) {
    const PlanTaskId id = s_.plan().add_flow(gpu(from), gpu(next(from)), Bytes{bytes}, phase_);
    s_.plan().set_label(id, fmt::format("{} step {}", what, j));
    const BuildEnv& b = s_.build_env();
    if (b.cluster.node_of(gpu(from)) != b.cluster.node_of(gpu(next(from)))) {
      s_.plan().set_efficiency(id, b.env.nccl.p2p_net_efficiency);
    }
    for (const PlanTaskId d : deps) {
      s_.plan().add_dependency(d, id);
    }
    return id;
  }

  PlanTaskId compute(int p, std::string_view label, const ComputeCost& c, const Tasks& deps) {
    const PlanTaskId id = s_.plan().add_compute(ComputeTask{
        gpu(p), c.time, c.flops, c.source, phase_, kComputeStream, label, c.kind});
    for (const PlanTaskId d : deps) {
      s_.plan().add_dependency(d, id);
    }
    return id;
  }

  // allgather: one ring all-gather of every block once all have reached the call; alltoall:
  // per step, each block on to the next rank once it has arrived (and the previous shift ended).
  void rotate_kv() {
    if (r_ == 1) {
      return;
    }
    const std::int64_t block = s_.kv_block_bytes();
    if (s_.job().cp.rotate == CpRotate::AllGather) {
      const BuildEnv& b = s_.build_env();
      Collectives coll(s_.plan(), b.cluster, b.env.nccl, phase_);
      gathered_ = coll.ring(ring_, r_ - 1, Bytes{r_ * block}, RingOptions{Protocol::Simple, 1, 1},
                            s_.joined(ring_))
                      .done;
      return;
    }
    for (int j = 0; j + 1 < r_; ++j) {
      for (int p = 0; p < r_; ++p) {
        Tasks deps = at_[static_cast<std::size_t>(p)];
        if (j == 0) {
          deps.insert(deps.end(), at_[static_cast<std::size_t>(next(p))].begin(),
                      at_[static_cast<std::size_t>(next(p))].end());
        } else {
          deps = {sends_[static_cast<std::size_t>(prev(p))][static_cast<std::size_t>(j - 1)],
                  sends_[static_cast<std::size_t>(p)][static_cast<std::size_t>(j - 1)]};
        }
        sends_[static_cast<std::size_t>(p)][static_cast<std::size_t>(j)] =
            flow(p, block, "kv", j, deps);
      }
    }
  }

  // Step j at position p: the SDPA call on block (p - j) once it is there, then its merge
  // (forward, j > 0) or its dQ and dK/dV sums (backward), which the next step waits for.
  void step(int p, int j) {
    const auto pi = static_cast<std::size_t>(p);
    const int origin = ((p - j) % r_ + r_) % r_;
    Tasks deps = at_[pi];
    if (j > 0) {
      const Tasks& arrived = s_.job().cp.rotate == CpRotate::AllGather
                                 ? gathered_
                                 : Tasks{sends_[static_cast<std::size_t>(prev(p))]
                                               [static_cast<std::size_t>(j - 1)]};
      deps.insert(deps.end(), arrived.begin(), arrived.end());
    }
    const ComputeCost c = s_.step_cost(p, origin, pass_);
    if (c.time == Time{} && c.flops.n == 0) {  // a skipped block (contiguous)
      steps_[pi].push_back(s_.plan().add_delay(gpu(p), Time{}, phase_));
      for (const PlanTaskId d : deps) {
        s_.plan().add_dependency(d, steps_[pi].back());
      }
    } else {
      steps_[pi].push_back(compute(p, "attention", c, deps));
    }
    at_[pi] = {steps_[pi].back()};
    if (r_ == 1) {
      return;
    }
    const bool bwd = pass_ == Pass::Bwd;
    if (j > 0 || bwd) {
      Tasks merge_deps = at_[pi];
      if (bwd && j > 0) {  // the partial sum from the rank before
        merge_deps.push_back(
            dkv_[static_cast<std::size_t>(prev(p))][static_cast<std::size_t>(j - 1)]);
      }
      at_[pi] = {compute(p, bwd ? "cp dq dkv sum" : "cp merge", s_.merge_cost(p, origin, pass_),
                         merge_deps)};
    }
    if (bwd) {  // FP32 partial sums: twice the BF16 block
      dkv_[pi][static_cast<std::size_t>(j)] = flow(p, 2 * s_.kv_block_bytes(), "dkv", j, at_[pi]);
    }
  }
};

}  // namespace

void attend_torch(CpStage& stage, Pass pass, std::uint32_t phase, CpDetails* record) {
  for (const std::vector<topo::GpuId>& ring : stage.rings()) {
    TorchRing(stage, ring, pass, phase)
        .run(record, record != nullptr && ring == stage.rings().front());
  }
}

}  // namespace hopsim::work
