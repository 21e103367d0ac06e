// The attention layer's plan: per layer and pass, TP collectives, GEMMs and the CP attention
// stage on every GPU of the mesh (docs/context-parallelism.md).
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/cp/attention_builder.hpp"
#include "workloads/cp/attention_closed_forms.hpp"
#include "workloads/cp/cp_stage.hpp"
#include "workloads/cp/cp_torch.hpp"
#include "workloads/cp/tp_overlap.hpp"

namespace hopsim::work {
namespace {

using Dims = AttentionDims;

}  // namespace

class AttentionBuilder::Impl {
  // One pass's kernels (before, after, mlp; as they run) and the phases they are counted in.
  struct PassParts {
    const std::array<KernelCosts, 3>& g;
    PhasePass name;
    std::uint32_t tp, proj, attn;
  };

 public:
  Impl(const AttentionLayerJob& job, const BuildEnv& b, Plan& plan)
      : job_(job), b_(b), plan_(plan), mesh_(b.env.mesh), p_(mesh_.spec()), stage_(job, b, plan) {
    const AttentionLayerKernels k = attention_layer_kernels(*b.env.model, p_, job, *b.compute);
    for (std::size_t i = 0; i < 3; ++i) {
      const LayerCosts& part = i == 0 ? k.before : i == 1 ? k.after : k.mlp;
      kernels_[0][i] = part.fwd;
      kernels_[1][i] = run_order(part.bwd);
    }
  }

  void layer(Pass pass, CpDetails* record) {
    const bool fwd = pass == Pass::Fwd;
    const std::array<KernelCosts, 3>& g = kernels_[!fwd];  // before, after, mlp
    const PhasePass name = fwd ? PhasePass::Fwd : PhasePass::Bwd;
    const std::uint32_t tp = phase(PhaseKind::TpComm, name);
    const std::uint32_t proj = phase(PhaseKind::Projections, name);
    const std::uint32_t attn = phase(PhaseKind::Attention, name);
    const std::optional<LayerSites> sites = layer_sites(job_.tp_overlap, pass);
    if (sites && p_.tp > 1) {
      overlapped_layer(pass, *sites, {g, name, tp, proj, attn}, record);
      return;
    }
    if (fwd) {
      tp_collective(true, tp);
      gemm_all(g[0], proj);
      attention(pass, attn, record);
      gemm_all(g[1], proj);
      tp_collective(false, tp);
      if (job_.mlp) {
        const std::uint32_t mlp = phase(PhaseKind::Mlp, name);
        tp_collective(true, tp);
        gemm_all(g[2], mlp);
        tp_collective(false, tp);
      }
      return;
    }
    if (job_.mlp) {  // backward: the forward in reverse, each all-gather a reduce-scatter
      const std::uint32_t mlp = phase(PhaseKind::Mlp, name);
      tp_collective(true, tp);
      gemm_all(g[2], mlp);
      tp_collective(false, tp);
    }
    tp_collective(true, tp);
    gemm_all(g[1], proj);
    attention(pass, attn, record);
    gemm_all(g[0], proj);
    tp_collective(false, tp);
  }

  // The layer with its TP collectives beside its GEMMs: forward QKV (all-gather), attention,
  // output projection (reduce-scatter), MLP (both); backward the reverse.
  void overlapped_layer(Pass pass, const LayerSites& sites, const PassParts& at,
                        CpDetails* record) {
    const bool fwd = pass == Pass::Fwd;
    const auto mlp = [&] {
      if (job_.mlp) {
        overlapped_block(stage_, at.g[2], sites.mlp, fwd, at.tp, phase(PhaseKind::Mlp, at.name));
      }
    };
    if (!fwd) {
      mlp();
    }
    overlapped_block(stage_, at.g[fwd ? 0 : 1], sites.first, fwd, at.tp, at.proj);
    attention(pass, at.attn, record);
    overlapped_block(stage_, at.g[fwd ? 1 : 0], sites.second, fwd, at.tp, at.proj);
    if (fwd) {
      mlp();
    }
  }

  std::int64_t cp_bytes_fwd() const { return stage_.cp_bytes_fwd(); }

  const Mesh& mesh() const { return mesh_; }

  const AttentionLayerJob& job() const { return job_; }

  const BuildEnv& build_env() const { return b_; }

  std::vector<TaskList>& frontier() { return stage_.frontier(); }

  const std::vector<topo::GpuId>& first_ring() const { return stage_.rings().front(); }

  const Dims& dims() const { return stage_.dims(); }

  const CpLayout& layout() const { return stage_.layout(); }

  /// Exact forward attention FLOPs of one GPU at ring position q (against every block).
  double position_flops(int q) {
    double total = 0;
    for (int kv = 0; kv < layout().ring(); ++kv) {
      total += static_cast<double>(stage_.step_cost(q, kv, Pass::Fwd).flops.n);
    }
    return total;
  }

 private:
  const AttentionLayerJob& job_;
  const BuildEnv& b_;
  Plan& plan_;
  const Mesh& mesh_;
  const ParallelSpec& p_;
  CpStage stage_;  // frontiers, rings and ring-step costs, shared with the CP algorithm
  std::array<KernelCosts, 3> kernels_[2];  // per pass (as they run): before, after, mlp

  std::uint32_t phase(PhaseKind kind, PhasePass pass) { return plan_.phase(kind, pass); }

  void gemm_all(const std::vector<std::pair<std::string, ComputeCost>>& gemms,
                std::uint32_t phase) {
    for (int gpu = 0; gpu < mesh_.size(); ++gpu) {
      for (const auto& [label, cost] : gemms) {
        stage_.compute(topo::GpuId{gpu}, label, cost, phase);
      }
    }
  }

  // Sequence parallelism: all-gather the TP group's tokens before a block, reduce-scatter
  // after; in the TP group's node (NVLink).
  void tp_collective(bool gather, std::uint32_t phase) {
    if (p_.tp == 1) {
      return;
    }
    const Bytes size{dims().tokens * b_.env.model->hidden * 2};  // BF16 activations of the group
    for (const std::vector<topo::GpuId>& group : mesh_.groups(Dim::Tp)) {
      Collectives coll(plan_, b_.cluster, b_.env.nccl, phase);
      const TaskList after = stage_.joined(group);
      const Handle h = coll.ring(group, static_cast<int>(group.size()) - 1, size,
                                 RingOptions{Protocol::Simple, 1, 1}, after);
      (void)gather;  // all-gather and reduce-scatter move the same bytes on the same ring
      for (const topo::GpuId g : group) {
        stage_.frontier(g) = h.done;
      }
    }
  }

  // The CP part of the layer: its algorithm's builder (cp_algorithms.hpp), or PyTorch's ring.
  void attention(Pass pass, std::uint32_t phase, CpDetails* record) {
    if (job_.cp.impl == CpImpl::Torch) {
      attend_torch(stage_, pass, phase, record);
      return;
    }
    cp_algorithm_row(job_.cp.algorithm).attend(stage_, pass, phase, record);
  }
};

// What is known of the layout before the run: positions' work and FLOPs, the overlap threshold.
CpDetails AttentionBuilder::details() const {
  const Impl& im = *impl_;
  const Mesh& mesh = im.mesh();
  const Dims& d = im.dims();
  const AttentionLayerJob& job = im.job();
  CpDetails details;
  details.algorithm = cp_algorithm_name(job.cp.algorithm);
  details.impl = cp_impl_name(job.cp.impl);
  details.rotate_method = job.cp.impl == CpImpl::Torch ? cp_rotate_name(job.cp.rotate) : "";
  details.balance = balance_name(job.cp.balance);
  details.degree = mesh.spec().cp;
  details.ulysses_degree = d.u;
  details.ring_degree = d.r;
  details.block_tokens = im.layout().chunk_tokens();
  details.tokens_per_rank = job.seq_len / mesh.spec().cp;
  details.step_compute.resize(static_cast<std::size_t>(mesh.size()));
  details.step_send.resize(static_cast<std::size_t>(mesh.size()));
  details.step_output.resize(static_cast<std::size_t>(mesh.size()));
  for (int q = 0; q < im.layout().ring(); ++q) {
    int units = 0;
    for (int kv = 0; kv < im.layout().ring(); ++kv) {
      units += im.layout().units(q, kv);
    }
    details.work_units_per_rank.push_back(units);
    details.flops_per_rank.push_back(impl_->position_flops(q));
  }
  const auto busiest =
      std::max_element(details.flops_per_rank.begin(), details.flops_per_rank.end()) -
      details.flops_per_rank.begin();
  details.steps_gpu = im.first_ring()[static_cast<std::size_t>(busiest)].value();
  const BuildEnv& b = im.build_env();
  const std::vector<topo::GpuId> group = mesh.group(Dim::Cp, 0);
  const bool one_node = std::all_of(group.begin(), group.end(), [&](topo::GpuId g) {
    return b.cluster.node_of(g) == b.cluster.node_of(group.front());
  });
  details.ring_link = one_node ? "nvlink" : "network";
  details.overlap_threshold_tokens = job.overlap_threshold_tokens(
      *b.env.model, mesh.spec(), b.env.cluster, !one_node, b.env.nccl.p2p_net_efficiency);
  details.min_seq_per_rank = 6 * details.overlap_threshold_tokens;
  return details;
}

AttentionBuilder::AttentionBuilder(const AttentionLayerJob& job, const BuildEnv& b, Plan& plan)
    : impl_(std::make_unique<Impl>(job, b, plan)) {}

AttentionBuilder::~AttentionBuilder() = default;

void AttentionBuilder::layer(Pass pass, CpDetails* record) {
  impl_->layer(pass, record);
}

std::vector<TaskList>& AttentionBuilder::frontier() {
  return impl_->frontier();
}

std::int64_t AttentionBuilder::cp_bytes_fwd() const {
  return impl_->cp_bytes_fwd();
}

std::vector<Case> AttentionLayerJob::cases(const BuildEnv& b) const {
  HOPSIM_ASSERT(b.compute != nullptr && b.env.model != nullptr,
                "an attention layer needs a compute model and a model");
  Plan plan;
  AttentionBuilder builder(*this, b, plan);
  CpDetails details = builder.details();
  if (request_overhead > Time{}) {
    const std::uint32_t phase = plan.phase(PhaseKind::Request, PhasePass::Fwd);
    for (int g = 0; g < static_cast<int>(b.env.mesh.size()); ++g) {
      builder.frontier()[static_cast<std::size_t>(g)] = {
          plan.add_delay(topo::GpuId{g}, request_overhead, phase)};
    }
  }
  if (forward()) {
    for (std::int64_t l = 0; l < layers; ++l) {
      builder.layer(Pass::Fwd, l == 0 ? &details : nullptr);
    }
  }
  if (backward()) {
    for (std::int64_t l = 0; l < layers; ++l) {
      builder.layer(Pass::Bwd, nullptr);
    }
  }
  details.cp_bytes_per_gpu_fwd = builder.cp_bytes_fwd();
  std::vector<Case> out;
  out.push_back(Case{fmt::format("{} x{} {}", kKind, layers, mode_name(mode)),
                     std::move(plan),
                     std::string(cp_algorithm_name(cp.algorithm)),
                     {},
                     std::move(details)});
  const LayerParams params = layer_params(*b.env.model, false);
  out.back().throughput = throughput(b.env, 2 * (params.attention + (mlp ? params.mlp : 0)));
  return out;
}

}  // namespace hopsim::work
