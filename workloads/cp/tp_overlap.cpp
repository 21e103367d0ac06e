// TP overlap's sites per framework, and an overlapped block's tasks (tp_overlap.hpp).
#include "workloads/cp/tp_overlap.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/cp/cp_stage.hpp"

namespace hopsim::work {

std::optional<LayerSites> layer_sites(TpOverlap overlap, Pass pass) {
  if (overlap == TpOverlap::None) {
    return std::nullopt;
  }
  const OverlapSite ring{OverlapMethod::RingExchange, overlap == TpOverlap::Userbuffers ? 1 : 0, 0};
  if (overlap == TpOverlap::AsyncTp) {
    return LayerSites{{ring, {}}, {{}, ring}, {ring, ring}};  // both passes alike
  }
  // NeMo's userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192: qkv_fprop, fc1_fprop, proj_dgrad
  // and fc2_dgrad ring_exchange (1 SM); proj_fprop pipeline (24 SMs, 4 splits), fc2_fprop
  // pipeline (16 SMs, 4 splits); the input gradients' reduce-scatters beside qkv_wgrad (bulk,
  // 24 SMs) and fc1_wgrad (bulk, 4 SMs).
  if (pass == Pass::Fwd) {
    return LayerSites{{ring, {}},
                      {{}, OverlapSite{OverlapMethod::Pipeline, 24, 4}},
                      {ring, OverlapSite{OverlapMethod::Pipeline, 16, 4}}};
  }
  return LayerSites{{ring, {}},
                    {{}, OverlapSite{OverlapMethod::Bulk, 24, 0}},
                    {ring, OverlapSite{OverlapMethod::Bulk, 4, 0}}};
}

namespace {

using Kernel = std::pair<std::string, ComputeCost>;

// The GEMM a block's collectives sit beside: the forward's GEMMs, the backward's input
// gradients.
bool anchor(const ComputeCost& c, bool fwd) {
  return c.kind == (fwd ? KernelClass::GemmFprop : KernelClass::GemmDgrad);
}

// A backward block's kernels in run order, each GEMM's input gradient before its weight
// gradient (as Megatron runs them; the reduce-scatter of the first goes beside the second).
KernelCosts dgrad_first(KernelCosts ks) {
  for (std::size_t i = 0; i + 1 < ks.size(); ++i) {
    if (ks[i].second.kind == KernelClass::GemmWgrad &&
        ks[i + 1].second.kind == KernelClass::GemmDgrad) {
      std::swap(ks[i], ks[i + 1]);
      ++i;
    }
  }
  return ks;
}

// One of `parts` equal pieces of a kernel, `slow` times longer (the SMs the communication holds).
ComputeCost piece(const ComputeCost& c, int parts, double slow) {
  ComputeCost out = c;
  out.time = Time::ps(std::llround(static_cast<double>(c.time.count_ps()) * slow / parts));
  out.flops.n = c.flops.n / parts;
  out.bytes = Bytes{c.bytes.n / parts};
  return out;
}

// One TP group's block: its GPUs' kernels and the collectives beside them.
class GroupBlock {
 public:
  GroupBlock(CpStage& stage, const std::vector<topo::GpuId>& group, std::uint32_t comm,
             std::uint32_t compute)
      : stage_(stage),
        group_(group),
        n_(static_cast<int>(group.size())),
        coll_(stage.plan(), stage.build_env().cluster, stage.build_env().env.nccl, comm),
        compute_(compute),
        bytes_{stage.dims().tokens * stage.build_env().env.model->hidden * 2},
        sms_(stage.build_env().env.cluster.gpu.sms) {}

  void kernels(const KernelCosts& ks, std::size_t from, std::size_t to) {
    for (const topo::GpuId g : group_) {
      for (std::size_t i = from; i < to; ++i) {
        stage_.compute(g, ks[i].first, ks[i].second, compute_);
      }
    }
  }

  // Ring exchange: step k brings shard k, GEMM piece k waits for it (piece 0: the own shard).
  void gather(const Kernel& gemm, const OverlapSite& site) {
    HOPSIM_ASSERT(site.method == OverlapMethod::RingExchange, "an all-gather overlaps by ring");
    std::vector<TaskList> steps;
    TaskList prev = stage_.joined(group_);
    for (int k = 1; k < n_; ++k) {
      prev = step(1, bytes_, prev);
      steps.push_back(prev);
    }
    for (const topo::GpuId g : group_) {
      for (int k = 0; k < n_; ++k) {
        if (k > 0) {
          const TaskList& arrived = steps[static_cast<std::size_t>(k - 1)];
          stage_.frontier(g).insert(stage_.frontier(g).end(), arrived.begin(), arrived.end());
        }
        stage_.compute(g, label(gemm, k), piece(gemm.second, n_, slow(site)), compute_);
      }
    }
  }

  // The reduce-scatter after ks[at] (a bulk one beside the weight gradient after it); returns
  // the index of the first kernel it leaves to run after.
  std::size_t scatter(const KernelCosts& ks, std::size_t at, const OverlapSite& site) {
    if (site.method == OverlapMethod::Bulk) {
      kernels(ks, at, at + 1);
      const TaskList done = step(n_ - 1, bytes_, stage_.joined(group_));
      std::size_t next = at + 1;
      if (next < ks.size() && ks[next].second.kind == KernelClass::GemmWgrad) {
        for (const topo::GpuId g : group_) {
          stage_.compute(g, ks[next].first, piece(ks[next].second, 1, slow(site)), compute_);
        }
        ++next;
      }
      wait(done);
      return next;
    }
    const bool ring = site.method == OverlapMethod::RingExchange;
    const int parts = ring ? n_ : site.splits;
    TaskList prev;
    for (int k = 0; k < parts; ++k) {
      for (const topo::GpuId g : group_) {
        stage_.compute(g, label(ks[at], k), piece(ks[at].second, parts, slow(site)), compute_);
      }
      if (ring && k == parts - 1) {
        break;  // the own shard's piece adds to what the last step brought
      }
      TaskList after = stage_.joined(group_);
      after.insert(after.end(), prev.begin(), prev.end());
      prev = ring ? step(1, bytes_, after) : step(n_ - 1, Bytes{bytes_.n / parts}, after);
    }
    wait(prev);
    return at + 1;
  }

 private:
  CpStage& stage_;
  const std::vector<topo::GpuId>& group_;
  int n_;
  Collectives coll_;
  std::uint32_t compute_;
  Bytes bytes_;  // the group's BF16 activations, as the plain collectives move them
  int sms_;

  TaskList step(int steps, Bytes size, const TaskList& after) {
    return coll_.ring(group_, steps, size, RingOptions{Protocol::Simple, 1, 1}, after).done;
  }

  void wait(const TaskList& tasks) {
    for (const topo::GpuId g : group_) {
      stage_.frontier(g).insert(stage_.frontier(g).end(), tasks.begin(), tasks.end());
    }
  }

  double slow(const OverlapSite& site) const {
    return sms_ > site.sms && site.sms > 0
               ? static_cast<double>(sms_) / static_cast<double>(sms_ - site.sms)
               : 1.0;
  }

  static std::string label(const Kernel& k, int i) { return fmt::format("{} {}", k.first, i); }
};

}  // namespace

void overlapped_block(CpStage& stage, const KernelCosts& run, const BlockSites& sites, bool fwd,
                      std::uint32_t comm, std::uint32_t compute) {
  const KernelCosts ks = fwd ? run : dgrad_first(run);
  std::size_t first = ks.size();
  std::size_t last = ks.size();
  for (std::size_t i = 0; i < ks.size(); ++i) {
    if (anchor(ks[i].second, fwd)) {
      first = std::min(first, i);
      last = i;
    }
  }
  HOPSIM_ASSERT(first < ks.size(), "an overlapped block needs a GEMM");
  HOPSIM_ASSERT(!(sites.gather && sites.scatter) || first < last,
                "a block with both collectives needs two GEMMs");
  for (const std::vector<topo::GpuId>& group : stage.build_env().env.mesh.groups(Dim::Tp)) {
    GroupBlock block(stage, group, comm, compute);
    std::size_t i = 0;
    if (sites.gather) {
      block.kernels(ks, 0, first);
      block.gather(ks[first], *sites.gather);
      i = first + 1;
    }
    if (sites.scatter) {
      block.kernels(ks, i, last);
      i = block.scatter(ks, last, *sites.scatter);
    }
    block.kernels(ks, i, ks.size());
  }
}

}  // namespace hopsim::work
