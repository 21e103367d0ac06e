// The attention layer's plan: per layer and pass, TP collectives, GEMMs and the CP attention
// stage on every GPU of the mesh (docs/context-parallelism.md).
#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/cp/ring_attention.hpp"
#include "workloads/cp/attention_builder.hpp"
#include "workloads/cp/attention_closed_forms.hpp"

namespace hopsim::work {
namespace {

using Dims = AttentionDims;

}  // namespace

class AttentionBuilder::Impl {
 public:
  Impl(const AttentionLayerJob& job, const BuildEnv& b, Plan& plan)
      : job_(job),
        b_(b),
        plan_(plan),
        mesh_(b.env.mesh),
        model_(*b.env.model),
        p_(mesh_.spec()),
        d_(job.dims(model_, p_)),
        layout_(job.layout(p_.cp, b.env.seed)),
        frontier_(static_cast<std::size_t>(mesh_.size())) {
    const AttentionLayerKernels k = attention_layer_kernels(model_, p_, job, *b.compute);
    for (std::size_t i = 0; i < 3; ++i) {
      const LayerCosts& part = i == 0 ? k.before : i == 1 ? k.after : k.mlp;
      kernels_[0][i] = part.fwd;
      kernels_[1][i] = run_order(part.bwd);
    }
    for (const std::vector<topo::GpuId>& group : mesh_.groups(Dim::Cp)) {
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

  void layer(Pass pass, CpDetails* record) {
    const bool fwd = pass == Pass::Fwd;
    const std::array<KernelCosts, 3>& g = kernels_[!fwd];  // before, after, mlp
    const PhasePass name = fwd ? PhasePass::Fwd : PhasePass::Bwd;
    const std::uint32_t tp = phase(PhaseKind::TpComm, name);
    const std::uint32_t proj = phase(PhaseKind::Projections, name);
    const std::uint32_t attn = phase(PhaseKind::Attention, name);
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

  std::int64_t cp_bytes_fwd() const { return cp_bytes_fwd_; }
  const Mesh& mesh() const { return mesh_; }
  const AttentionLayerJob& job() const { return job_; }
  const BuildEnv& build_env() const { return b_; }
  std::vector<TaskList>& frontier() { return frontier_; }

  const std::vector<topo::GpuId>& first_ring() const { return rings_.front(); }
  const Dims& dims() const { return d_; }
  const CpLayout& layout() const { return layout_; }

  /// Exact forward attention FLOPs of one GPU at ring position q (against every block).
  double position_flops(int q) {
    double total = 0;
    for (int kv = 0; kv < layout_.ring(); ++kv) {
      total += static_cast<double>(step_cost(q, kv, Pass::Fwd).flops.n);
    }
    return total;
  }

 private:
  const AttentionLayerJob& job_;
  const BuildEnv& b_;
  Plan& plan_;
  const Mesh& mesh_;
  const ModelSpec& model_;
  const ParallelSpec& p_;
  Dims d_;
  CpLayout layout_;
  std::vector<TaskList> frontier_;  // per GPU: what its next stage waits for
  std::array<KernelCosts, 3> kernels_[2];  // per pass (as they run): before, after, mlp
  std::vector<std::vector<topo::GpuId>> rings_;  // CP rings, one per head slice and CP group
  std::vector<std::vector<topo::GpuId>> ulysses_groups_;  // all-to-all groups inside each CP group
  std::map<std::tuple<int, int, Pass>, ComputeCost> step_costs_;
  std::int64_t cp_bytes_fwd_ = 0;

  std::uint32_t phase(PhaseKind kind, PhasePass pass) { return plan_.phase(kind, pass); }

  TaskList& frontier(topo::GpuId gpu) { return frontier_[gpu.index()]; }

  TaskList joined(std::span<const topo::GpuId> gpus) {
    TaskList all;
    for (const topo::GpuId g : gpus) {
      all.insert(all.end(), frontier(g).begin(), frontier(g).end());
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }

  PlanTaskId compute(topo::GpuId gpu, const std::string& label, const ComputeCost& cost,
                     std::uint32_t phase) {
    const PlanTaskId id = plan_.add_compute(ComputeTask{gpu, cost.time, cost.flops, cost.source,
                                                        phase, kComputeStream, label, cost.kind});
    for (PlanTaskId d : frontier(gpu)) {
      plan_.add_dependency(d, id);
    }
    frontier(gpu) = {id};
    return id;
  }

  void gemm_all(const std::vector<std::pair<std::string, ComputeCost>>& gemms,
                std::uint32_t phase) {
    for (int gpu = 0; gpu < mesh_.size(); ++gpu) {
      for (const auto& [label, cost] : gemms) {
        compute(topo::GpuId{gpu}, label, cost, phase);
      }
    }
  }

  // Sequence parallelism: all-gather the TP group's tokens before a block, reduce-scatter
  // after; in the TP group's node (NVLink).
  void tp_collective(bool gather, std::uint32_t phase) {
    if (p_.tp == 1) {
      return;
    }
    const Bytes size{d_.tokens * model_.hidden * 2};  // BF16 activations of the group
    for (const std::vector<topo::GpuId>& group : mesh_.groups(Dim::Tp)) {
      Collectives coll(plan_, b_.cluster, b_.env.nccl, phase);
      const TaskList after = joined(group);
      const Handle h = coll.ring(group, static_cast<int>(group.size()) - 1, size,
                                 RingOptions{Protocol::Simple, 1, 1}, after);
      (void)gather;  // all-gather and reduce-scatter move the same bytes on the same ring
      for (const topo::GpuId g : group) {
        frontier(g) = h.done;
      }
    }
  }

  ComputeCost step_cost(int q, int kv, Pass pass) {
    const auto key = std::make_tuple(q, kv, pass);
    const auto it = step_costs_.find(key);
    if (it != step_costs_.end()) {
      return it->second;
    }
    std::vector<AttentionCall> calls =
        kv < 0 ? layout_.calls_all_keys(q) : layout_.calls(q, kv);
    ComputeCost total;
    total.source = Source::Exact;
    bool any = false;
    for (const AttentionCall& c : calls) {
      AttentionShape s;
      s.d_qk = d_.d_qk;
      s.d_v = d_.d_v;
      s.mask = c.mask;
      s.gqa = std::max<std::int64_t>(1, d_.attn_q_heads / d_.attn_kv_heads);
      s.s_q = c.s_q;
      s.s_kv = c.s_kv;
      s.bh = job_.micro_batch * d_.attn_q_heads;
      const ComputeCost one = b_.compute->attention(job_.dtype, s, pass);
      total.time += one.time;
      total.flops.n += one.flops.n;
      total.bytes = total.bytes + one.bytes;
      total.source = std::max(total.source, one.source);
      any = true;
    }
    if (!any) {
      total = ComputeCost{};
    }
    total.kind = pass == Pass::Fwd ? KernelClass::AttentionFwd : KernelClass::AttentionBwd;
    step_costs_.emplace(key, total);
    return total;
  }

  // Bytes of position q's K and V block (cached keys included), for one GPU's heads.
  std::int64_t kv_block_bytes(int q) const {
    (void)q;  // every position holds as many tokens
    const std::int64_t tokens =
        (layout_.tokens_per_position() + layout_.cached_per_position()) * job_.micro_batch;
    return tokens * d_.attn_kv_heads * (d_.d_qk + d_.d_v) * d_.elem;
  }

  std::int64_t q_block_bytes() const {
    return layout_.tokens_per_position() * job_.micro_batch * d_.attn_q_heads * d_.d_qk * d_.elem;
  }

  // Partial output (BF16) and its softmax statistics (FP32 per query and head).
  std::int64_t output_bytes() const {
    return layout_.tokens_per_position() * job_.micro_batch * d_.attn_q_heads * (d_.d_v * 2 + 4);
  }

  void attention(Pass pass, std::uint32_t phase, CpDetails* record) {
    if (d_.u > 1) {
      ulysses_all_to_all(pass == Pass::Fwd, phase, pass == Pass::Fwd && record != nullptr);
    }
    for (const std::vector<topo::GpuId>& ring : rings_) {
      ring_stage(ring, pass, phase, record);
    }
    if (d_.u > 1) {
      ulysses_all_to_all(pass != Pass::Fwd, phase, pass == Pass::Fwd && record != nullptr);
    }
  }

  // The all-to-all of a Ulysses group: sequence-sharded to head-sharded (`in`: Q, K, V; on
  // the way back the output) or back.
  void ulysses_all_to_all(bool in, std::uint32_t phase, bool count) {
    // Each peer gets every token this GPU holds, for the peer's heads only. K/V heads a peer
    // needs: its share, or one head when each rank gets a copy.
    const std::int64_t kv_to_peer =
        d_.kv_heads % d_.u == 0 ? d_.kv_heads / d_.u : std::int64_t{1};
    const std::int64_t per_token =
        in ? d_.attn_q_heads * d_.d_qk + kv_to_peer * (d_.d_qk + d_.d_v)
           : d_.attn_q_heads * d_.d_v;
    const std::int64_t pair_bytes = d_.tokens * per_token * d_.elem;
    const auto n = static_cast<std::size_t>(d_.u);
    ByteMatrix m{n, std::vector<std::int64_t>(n * n, pair_bytes)};
    for (std::size_t i = 0; i < n; ++i) {
      m.bytes[i * n + i] = 0;
    }
    for (const std::vector<topo::GpuId>& group : ulysses_groups_) {
      Collectives coll(plan_, b_.cluster, b_.env.nccl, phase);
      const TaskList after = joined(group);
      const Handle h = coll.all_to_all_flat(group, m, after);
      for (const topo::GpuId g : group) {
        frontier(g) = h.done;
      }
    }
    if (count) {
      cp_bytes_fwd_ += pair_bytes * (d_.u - 1);
    }
  }

  void ring_stage(const std::vector<topo::GpuId>& ring, Pass pass, std::uint32_t phase,
                  CpDetails* record) {
    const auto r = static_cast<int>(ring.size());
    const bool fwd = pass == Pass::Fwd;
    const bool counting = record != nullptr && ring == rings_.front();
    if (job_.cp.algorithm == CpAlgorithm::AllGather && r > 1) {
      all_gather_stage(ring, pass, phase, counting);
      return;
    }
    std::vector<TaskList> ready;
    for (const topo::GpuId g : ring) {
      ready.push_back(frontier(g));
    }
    RingInput in;
    in.gpus = ring;
    in.ready = ready;
    in.phase = phase;
    const bool pass_q = job_.cp.algorithm == CpAlgorithm::RingPassQ;
    in.compute = [&](int p, int j) {
      const int origin = ((p - j) % r + r) % r;
      // Pass-KV: p's queries against origin's keys; pass-Q: origin's queries against p's.
      const ComputeCost c = pass_q ? step_cost(origin, p, pass) : step_cost(p, origin, pass);
      return ComputeTask{topo::GpuId{ring[static_cast<std::size_t>(p)]},
                         c.time,
                         c.flops,
                         c.source,
                         phase,
                         kComputeStream,
                         "attention",
                         c.kind};
    };
    in.block_bytes = [&](int p) { return pass_q ? q_block_bytes() : kv_block_bytes(p); };
    in.efficiency = [&](topo::GpuId a, topo::GpuId b) {
      const bool same_node = b_.cluster.node_of(a) == b_.cluster.node_of(b);
      return same_node ? 1.0 : b_.env.nccl.p2p_net_efficiency;
    };
    RingTasks tasks;
    if (pass_q) {
      tasks = ring_pass_q_forward(plan_, in, [&](int) { return output_bytes(); });
    } else if (fwd) {
      tasks = ring_pass_kv_forward(plan_, in);
    } else {
      tasks = ring_pass_kv_backward(plan_, in);
    }
    for (int p = 0; p < r; ++p) {
      const topo::GpuId g = ring[static_cast<std::size_t>(p)];
      frontier(g) = tasks.done[static_cast<std::size_t>(p)];
      if (record != nullptr && fwd) {
        record->step_compute[g.index()] = tasks.compute[static_cast<std::size_t>(p)];
        record->step_send[g.index()] = tasks.send[static_cast<std::size_t>(p)];
      }
    }
    if (counting && r > 1) {
      cp_bytes_fwd_ += (r - 1) * in.block_bytes(0) + (pass_q ? (r - 1) * output_bytes() : 0);
    }
  }

  // Llama 3's all-gather CP: gather every position's K and V (exposed), attend locally;
  // backward: attend, then reduce-scatter dK and dV.
  void all_gather_stage(const std::vector<topo::GpuId>& ring, Pass pass, std::uint32_t phase,
                        bool counting) {
    const auto r = static_cast<std::int64_t>(ring.size());
    const Bytes size{r * kv_block_bytes(0)};  // the gathered K and V (nccl-tests convention)
    Collectives coll(plan_, b_.cluster, b_.env.nccl, phase);
    const RingOptions options{Protocol::Simple, 1, 1};
    if (pass == Pass::Fwd) {
      const Handle h = coll.ring(ring, static_cast<int>(r) - 1, size, options, joined(ring));
      for (const topo::GpuId g : ring) {
        frontier(g) = h.done;
      }
      if (counting) {
        cp_bytes_fwd_ += (r - 1) * kv_block_bytes(0);
      }
    }
    for (std::int64_t p = 0; p < r; ++p) {
      const topo::GpuId g = ring[static_cast<std::size_t>(p)];
      compute(g, "attention", step_cost(static_cast<int>(p), -1, pass), phase);
    }
    if (pass == Pass::Bwd) {
      const Handle h = coll.ring(ring, static_cast<int>(r) - 1, size, options, joined(ring));
      for (const topo::GpuId g : ring) {
        frontier(g) = h.done;
      }
    }
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
  details.balance = balance_name(job.cp.balance);
  details.degree = mesh.spec().cp;
  details.ulysses_degree = d.u;
  details.ring_degree = d.r;
  details.block_tokens = im.layout().chunk_tokens();
  details.tokens_per_rank = job.seq_len / mesh.spec().cp;
  details.step_compute.resize(static_cast<std::size_t>(mesh.size()));
  details.step_send.resize(static_cast<std::size_t>(mesh.size()));
  for (int q = 0; q < im.layout().ring(); ++q) {
    int units = 0;
    for (int kv = 0; kv < im.layout().ring(); ++kv) {
      units += im.layout().units(q, kv);
    }
    details.work_units_per_rank.push_back(units);
    details.flops_per_rank.push_back(impl_->position_flops(q));
  }
  const auto busiest = std::max_element(details.flops_per_rank.begin(),
                                        details.flops_per_rank.end()) -
                       details.flops_per_rank.begin();
  details.steps_gpu = im.first_ring()[static_cast<std::size_t>(busiest)].value();
  const BuildEnv& b = im.build_env();
  const std::vector<topo::GpuId> group = mesh.group(Dim::Cp, 0);
  const bool one_node = std::all_of(group.begin(), group.end(), [&](topo::GpuId g) {
    return b.cluster.node_of(g) == b.cluster.node_of(group.front());
  });
  details.ring_link = one_node ? "nvlink" : "network";
  details.overlap_threshold_tokens =
      job.overlap_threshold_tokens(*b.env.model, mesh.spec(), b.env.cluster, !one_node,
                                   b.env.nccl.p2p_net_efficiency);
  details.min_seq_per_rank = 6 * details.overlap_threshold_tokens;
  return details;
}

AttentionBuilder::AttentionBuilder(const AttentionLayerJob& job, const BuildEnv& b, Plan& plan)
    : impl_(std::make_unique<Impl>(job, b, plan)) {}
AttentionBuilder::~AttentionBuilder() = default;
void AttentionBuilder::layer(Pass pass, CpDetails* record) { impl_->layer(pass, record); }
std::vector<TaskList>& AttentionBuilder::frontier() { return impl_->frontier(); }
std::int64_t AttentionBuilder::cp_bytes_fwd() const { return impl_->cp_bytes_fwd(); }

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
  out.push_back(Case{fmt::format("{} x{} {}", kKind, layers, mode_name(mode)), std::move(plan),
                     std::string(cp_algorithm_name(cp.algorithm)), {}, std::move(details)});
  const LayerParams params = layer_params(*b.env.model, false);
  out.back().throughput = throughput(b.env, 2 * (params.attention + (mlp ? params.mlp : 0)));
  return out;
}

}  // namespace hopsim::work
