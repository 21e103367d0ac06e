// The MoE layer's plan: per pass and micro-batch, the router's compute, dispatch, expert GEMMs
// over the rows each GPU received, combine (docs/expert-parallelism.md).
#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/costs/recompute_kernels.hpp"
#include "workloads/ep/balancer.hpp"
#include "workloads/ep/hbm_sharing.hpp"
#include "workloads/ep/moe_builder.hpp"
#include "workloads/ep/moe_closed_forms.hpp"
#include "workloads/ep/routing_cache.hpp"

namespace hopsim::work {
namespace {

// Seeds of the token draws: one per EP group and micro-batch (0, 1; 2 for the balancer's
// training steps), apart from each other. The experts' popularity has its own seed.
std::uint64_t routing_seed(std::uint64_t seed, std::size_t group, std::int64_t draw) {
  return seed + 0x9E3779B97F4A7C15ULL * (group * 3 + static_cast<std::uint64_t>(draw));
}

TwoTierMatrix scaled(const TwoTierMatrix& tokens, std::int64_t bytes) {
  TwoTierMatrix m = tokens;
  for (auto* v : {&m.gpu.bytes, &m.selections.bytes, &m.to_node}) {
    for (std::int64_t& x : *v) {
      x *= bytes;
    }
  }
  return m;
}

// Rows of one expert in a grouped GEMM are padded to a multiple of this block: DeepGEMM's
// contiguous layout aligns each expert's rows to its 128-row M block, so an expert with 1 row
// costs as much as one with 128.
constexpr std::int64_t kExpertRowBlock = 128;

}  // namespace

// One EP group's routing for one micro-batch, in tokens (scaled to bytes per direction); the
// run's other plans may share it. Outside the anonymous namespace: MoeBuilder::Impl holds it.
struct GroupRouting {
  std::vector<topo::GpuId> ranks;
  std::shared_ptr<const GroupTokens> routed;
};

class MoeBuilder::Impl {
 public:
  Impl(const MoeLayerJob& job, const BuildEnv& b, Plan& plan)
      : job_(job),
        b_(b),
        plan_(plan),
        mesh_(b.env.mesh),
        model_(*b.env.model),
        p_(mesh_.spec()),
        tokens_mb_(job.micro_batch_tokens()),
        ready_{std::vector<TaskList>(static_cast<std::size_t>(mesh_.size())),
               std::vector<TaskList>(static_cast<std::size_t>(mesh_.size()))} {
    if (job.comm_sms > 0) {  // the compute beside an exchange runs on the other SMs
      plan_.share_sms({job.comm_sms, b.env.cluster.gpu.sms});
    }
    const std::vector<std::vector<topo::GpuId>> groups = mesh_.groups(Dim::Ep);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      MoeRouting r = job.routing;
      r.tokens_per_gpu = tokens_mb_;
      if (job.balancer == Balancer::AuxLoss) {
        r.uniform_share = aux_uniform_share(job.aux_loss_weight);
      }
      if (job.balancer == Balancer::Bias) {
        r.seed = routing_seed(job.routing.seed, g, 2);  // the training steps' own tokens
        BiasBalance balance =
            balance_bias(groups[g], b.cluster, r, job.balance_steps, job.bias_update);
        r.bias = std::move(balance.bias);
        if (g == 0) {
          balance_steps_ = std::move(balance.max_over_mean);
        }
      }
      if (job.redundant_experts > 0) {  // copies of the experts this router makes hot
        r.placement = redundant_placement(
            r, groups[g].size(),
            job.redundant_experts / static_cast<std::int64_t>(groups[g].size()));
      }
      if (g == 0) {
        placement_ =
            r.placement.empty() ? even_placement(r.experts, groups[g].size()) : r.placement;
      }
      for (std::int64_t mb = 0; mb < job.micro_batches(); ++mb) {
        r.seed = routing_seed(job.routing.seed, g, mb);
        routing_[static_cast<std::size_t>(mb)].push_back(
            {groups[g], route_group(b.routings, groups[g], b.cluster, r)});
      }
    }
    hidden_ = model_.hidden;
    // Two micro-batches of one GPU's tokens are the two halves of its sequence: the second
    // half's queries also see the first half's keys, so attention costs what it costs unsplit.
    // DualPipe's pair is two micro-batches, each a whole sequence.
    for (std::int64_t mb = 0; mb < job.micro_batches(); ++mb) {
      const std::int64_t before = job.overlap == EpOverlap::TwoMicrobatch ? mb * tokens_mb_ : 0;
      pre_[static_cast<std::size_t>(mb)] = moe_attention_costs(
          model_, p_, tokens_mb_, before, job.attention, *b.compute, job.dtypes.router);
    }
    shared_ = moe_shared_costs(model_, tokens_mb_, *b.compute, job.dtypes.shared);
    for (std::int64_t mb = 0; mb < job.micro_batches(); ++mb) {
      const auto i = static_cast<std::size_t>(mb);
      const RecomputedKernels again =
          recomputed_kernels(model_, job.recompute_modules, pre_[i].fwd, shared_.fwd);
      again_pre_[i] = again.attention;
      again_shared_ = again.shared;
    }
  }

  const MoeLayerJob& job() const { return job_; }

  const BuildEnv& build_env() const { return b_; }

  std::vector<TaskList>& ready(std::int64_t mb) { return ready_[static_cast<std::size_t>(mb)]; }

  const LayerCosts& pre_costs(std::int64_t mb) const { return pre_[static_cast<std::size_t>(mb)]; }

  const std::vector<double>& balance_steps() const { return balance_steps_; }

  const std::vector<std::vector<int>>& placement() const { return placement_; }

  const std::vector<GroupRouting>& routing(std::int64_t mb) const {
    return routing_[static_cast<std::size_t>(mb)];
  }

  // Forward, one layer: attention and router of every micro-batch first (the second one's
  // overlaps the first one's dispatch), then per micro-batch the shared experts, the experts
  // once its dispatch has landed, and its combine. A micro-batch's next layer starts when its
  // combine has landed, so the next layer's attention hides this layer's last combine.
  void forward() {
    const std::int64_t mbs = job_.micro_batches();
    std::vector<std::vector<TaskList>> dispatched(static_cast<std::size_t>(mbs));
    for (std::int64_t mb = 0; mb < mbs; ++mb) {
      const std::vector<TaskList> pre =
          compute_all(pre_costs(mb).fwd, phase(pre_phase(), PhasePass::Fwd), ready(mb));
      dispatched[static_cast<std::size_t>(mb)] =
          exchange(mb, ExchangeOp::Dispatch, job_.dispatch_bytes_per_element,
                   phase(PhaseKind::Dispatch, PhasePass::Fwd), pre, true);
    }
    for (std::int64_t mb = 0; mb < mbs; ++mb) {
      compute_all(shared_.fwd, phase(PhaseKind::SharedExperts, PhasePass::Fwd), {});
      const std::vector<TaskList> done =
          experts(mb, Pass::Fwd, dispatched[static_cast<std::size_t>(mb)]);
      ready(mb) = exchange(mb, ExchangeOp::Combine, job_.combine_bytes_per_element,
                           phase(PhaseKind::Combine, PhasePass::Fwd), done);
    }
  }

  // Backward, one layer: output gradients out to the experts (combine's backward), the shared
  // experts' backward meanwhile, the experts' backward, input gradients back (dispatch's
  // backward), then attention's backward per micro-batch.
  void backward() {
    const std::int64_t mbs = job_.micro_batches();
    std::vector<std::vector<TaskList>> out(static_cast<std::size_t>(mbs));
    for (std::int64_t mb = 0; mb < mbs; ++mb) {
      out[static_cast<std::size_t>(mb)] =
          exchange(mb, ExchangeOp::Dispatch, job_.dispatch_bytes_per_element,
                   phase(PhaseKind::Combine, PhasePass::Bwd), ready(mb));
    }
    std::vector<std::vector<TaskList>> back(static_cast<std::size_t>(mbs));
    for (std::int64_t mb = 0; mb < mbs; ++mb) {
      compute_all(shared_backward(), phase(PhaseKind::SharedExperts, PhasePass::Bwd), {});
      const std::vector<TaskList> done = experts(mb, Pass::Bwd, out[static_cast<std::size_t>(mb)]);
      back[static_cast<std::size_t>(mb)] =
          exchange(mb, ExchangeOp::Combine, job_.combine_bytes_per_element,
                   phase(PhaseKind::Dispatch, PhasePass::Bwd), done);
    }
    for (std::int64_t mb = 0; mb < mbs; ++mb) {
      ready(mb) = compute_all(pre_backward(mb), phase(pre_phase(), PhasePass::Bwd),
                              back[static_cast<std::size_t>(mb)]);
    }
  }

  // DualPipe's chunk pair, one layer: micro-batch 0's forward against micro-batch 1's backward
  // (of the layer in mirror). Communication stream: 1's combine backward, 0's dispatch, 1's
  // dispatch backward, 0's combine; compute stream: 0's attention, 1's experts backward, 0's
  // experts, 1's attention backward. So each exchange runs under the other micro-batch's
  // compute.
  // `attention` (a transformer layer's pair): micro-batch 0's attention forward runs before
  // its router, 1's attention backward after its router's backward.
  void pair(const PairAttention* attention = nullptr) {
    const std::vector<TaskList> b_out =
        exchange(1, ExchangeOp::Dispatch, job_.dispatch_bytes_per_element,
                 phase(PhaseKind::Combine, PhasePass::Bwd), ready(1));
    const std::vector<TaskList> f_start =
        attention != nullptr ? attention->forward(ready(0)) : ready(0);
    const std::vector<TaskList> f_pre =
        compute_all(pre_costs(0).fwd, phase(pre_phase(), PhasePass::Fwd), f_start);
    compute_all(shared_backward(), phase(PhaseKind::SharedExperts, PhasePass::Bwd), {});
    const std::vector<TaskList> b_experts = experts(1, Pass::Bwd, b_out);
    const std::vector<TaskList> f_in =
        exchange(0, ExchangeOp::Dispatch, job_.dispatch_bytes_per_element,
                 phase(PhaseKind::Dispatch, PhasePass::Fwd), f_pre, true);
    compute_all(shared_.fwd, phase(PhaseKind::SharedExperts, PhasePass::Fwd), {});
    const std::vector<TaskList> f_experts = experts(0, Pass::Fwd, f_in);
    const std::vector<TaskList> b_back =
        exchange(1, ExchangeOp::Combine, job_.combine_bytes_per_element,
                 phase(PhaseKind::Dispatch, PhasePass::Bwd), b_experts);
    ready(1) = compute_all(pre_backward(1), phase(pre_phase(), PhasePass::Bwd), b_back);
    if (attention != nullptr) {
      ready(1) = attention->backward(ready(1));
    }
    ready(0) = exchange(0, ExchangeOp::Combine, job_.combine_bytes_per_element,
                        phase(PhaseKind::Combine, PhasePass::Fwd), f_experts);
  }

  // The backward pass starts once every micro-batch's forward has ended.
  void join() {
    std::vector<TaskList> all(static_cast<std::size_t>(mesh_.size()));
    for (std::int64_t mb = 0; mb < job_.micro_batches(); ++mb) {
      for (std::size_t g = 0; g < all.size(); ++g) {
        all[g].insert(all[g].end(), ready(mb)[g].begin(), ready(mb)[g].end());
      }
    }
    for (std::int64_t mb = 0; mb < job_.micro_batches(); ++mb) {
      ready(mb) = all;
    }
  }

 private:
  const MoeLayerJob& job_;
  const BuildEnv& b_;
  Plan& plan_;
  const Mesh& mesh_;
  const ModelSpec& model_;
  const ParallelSpec& p_;
  std::int64_t tokens_mb_;
  std::int64_t hidden_ = 0;
  LayerCosts pre_[2];  // per micro-batch: attention (or not) and the router
  LayerCosts shared_;
  // What a backward runs again first (recompute_modules): per micro-batch of its attention
  // part, and of the shared experts.
  KernelCosts again_pre_[2];
  KernelCosts again_shared_;
  std::vector<GroupRouting> routing_[2];
  std::vector<double> balance_steps_;
  std::vector<std::vector<int>> placement_;  // EP group 0's
  /// Per micro-batch and GPU: what its next layer starts after.
  std::vector<TaskList> ready_[2];
  /// The communication stream: what the next exchange of each EP group starts after.
  std::map<std::size_t, TaskList> comm_free_;
  /// The experts' kernels by (rows per expert, experts), priced once: GPUs share them.
  std::map<std::pair<std::int64_t, std::int64_t>, LayerCosts> expert_costs_;

  std::uint32_t phase(PhaseKind kind, PhasePass pass) { return plan_.phase(kind, pass); }

  // A backward part's kernels as they run: what it runs again first, then its backward.
  static KernelCosts again_then(const KernelCosts& again, const KernelCosts& bwd) {
    KernelCosts out = again;
    const KernelCosts run = run_order(bwd);
    out.insert(out.end(), run.begin(), run.end());
    return out;
  }

  KernelCosts pre_backward(std::int64_t mb) const {
    return again_then(again_pre_[static_cast<std::size_t>(mb)], pre_costs(mb).bwd);
  }

  KernelCosts shared_backward() const { return again_then(again_shared_, shared_.bwd); }

  // The kernels of a grouped GEMM over `local` experts of `rows` rows each.
  const LayerCosts& expert_costs(std::int64_t rows, std::int64_t local) {
    const std::pair<std::int64_t, std::int64_t> key{rows, local};
    auto it = expert_costs_.find(key);
    if (it == expert_costs_.end()) {
      it = expert_costs_
               .emplace(key,
                        moe_expert_costs(model_, p_, rows, *b_.compute, local, job_.dtypes.experts))
               .first;
    }
    return it->second;
  }

  // What runs before dispatch: attention and the router, or the router alone.
  PhaseKind pre_phase() const { return job_.attention ? PhaseKind::Attention : PhaseKind::Router; }

  PlanTaskId compute(topo::GpuId gpu, const std::string& label, const ComputeCost& cost,
                     std::uint32_t phase, const TaskList& after) {
    const PlanTaskId id = plan_.add_compute(ComputeTask{gpu, cost.time, cost.flops, cost.source,
                                                        phase, kComputeStream, label, cost.kind});
    for (PlanTaskId a : after) {
      plan_.add_dependency(a, id);
    }
    return id;
  }

  // `kernels` one after another on every GPU (after `after[gpu]` when given); returns each
  // GPU's last task.
  std::vector<TaskList> compute_all(const KernelCosts& kernels, std::uint32_t phase,
                                    const std::vector<TaskList>& after) {
    std::vector<TaskList> last(static_cast<std::size_t>(mesh_.size()));
    if (kernels.empty()) {
      return after.empty() ? last : after;
    }
    for (int gpu = 0; gpu < mesh_.size(); ++gpu) {
      const auto g = static_cast<std::size_t>(gpu);
      TaskList deps = after.empty() ? TaskList{} : after[g];
      for (const auto& [label, cost] : kernels) {
        deps = {compute(topo::GpuId{gpu}, label, cost, phase, deps)};
      }
      last[g] = deps;
    }
    return last;
  }

  // The experts of every GPU over the rows it received in micro-batch `mb`, after `arrived`.
  std::vector<TaskList> experts(std::int64_t mb, Pass pass, const std::vector<TaskList>& arrived) {
    const std::uint32_t ph =
        phase(PhaseKind::Experts, pass == Pass::Fwd ? PhasePass::Fwd : PhasePass::Bwd);
    std::vector<TaskList> last(static_cast<std::size_t>(mesh_.size()));
    for (const GroupRouting& gr : routing(mb)) {
      for (std::size_t j = 0; j < gr.ranks.size(); ++j) {
        // The rows of each of the GPU's expert slots, padded to the grouped GEMM's row block.
        const std::vector<std::int64_t>& slots = gr.routed->load.slot_tokens[j];
        const auto local = static_cast<std::int64_t>(slots.size());
        std::int64_t rows = 0;
        std::int64_t padded = 0;
        for (const std::int64_t r : slots) {
          rows += r;
          padded += (r + kExpertRowBlock - 1) / kExpertRowBlock * kExpertRowBlock;
        }
        const topo::GpuId gpu = gr.ranks[j];
        const std::size_t g = gpu.index();
        // A grouped GEMM over the GPU's experts at their mean padded rows (rounded up).
        const LayerCosts& costs = expert_costs((padded + local - 1) / local, local);
        const KernelCosts k =
            pass == Pass::Fwd
                ? costs.fwd
                : again_then(recomputed_expert_kernels(job_.recompute_modules, costs.fwd),
                             costs.bwd);
        TaskList deps = arrived[g];
        for (const auto& [label, cost] : k) {
          if (rows > 0) {
            deps = {compute(gpu, label, cost, ph, deps)};
          }
        }
        last[g] = deps;
      }
    }
    return last;
  }

  // One exchange of micro-batch `mb` in every EP group, `per_element` bytes per hidden element,
  // after each GPU's `after`; returns per GPU the tasks after which its data has arrived.
  // `new_layout`: a forward dispatch, which pays its library's fixed costs per call first.
  // A row that permutes locally (Megatron's alltoall dispatcher) runs its permute before an
  // exchange toward the experts and its unpermute after one back, on the compute stream.
  std::vector<TaskList> exchange(std::int64_t mb, ExchangeOp op, double per_element,
                                 std::uint32_t ph, const std::vector<TaskList>& after,
                                 bool new_layout = false) {
    if (!ep_algorithm_row(job_.algorithm).permutes_locally) {
      return exchange_only(mb, op, per_element, ph, after, new_layout);
    }
    const PhasePass when = plan_.phases()[ph].when;
    const Pass pass = when == PhasePass::Fwd ? Pass::Fwd : Pass::Bwd;
    const KernelCosts kernels = local_permute(pass);
    const std::uint32_t router = phase(PhaseKind::Router, when);
    if (op == ExchangeOp::Dispatch) {
      const std::vector<TaskList> permuted = compute_all({kernels[0]}, router, after);
      return exchange_only(mb, op, per_element, ph, permuted, new_layout);
    }
    return compute_all({kernels[1]}, router,
                       exchange_only(mb, op, per_element, ph, after, new_layout));
  }

  // Megatron's permute and unpermute of each GPU's (token, expert) copies in `pass`
  // (dispatcher_permute_costs): dropless, every GPU has tokens x top_k of them.
  KernelCosts local_permute(Pass pass) const {
    const LayerCosts c =
        dispatcher_permute_costs(model_, tokens_mb_, job_.routing.top_k, *b_.compute);
    return pass == Pass::Fwd ? c.fwd : c.bwd;
  }

  std::vector<TaskList> exchange_only(std::int64_t mb, ExchangeOp op, double per_element,
                                      std::uint32_t ph, const std::vector<TaskList>& after,
                                      bool new_layout) {
    std::vector<TaskList> arrived(static_cast<std::size_t>(mesh_.size()));
    const std::int64_t token_bytes = std::llround(static_cast<double>(hidden_) * per_element);
    const std::vector<GroupRouting>& groups = routing(mb);
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      const GroupRouting& gr = groups[gi];
      TaskList start = comm_free_[gi];
      for (const topo::GpuId r : gr.ranks) {
        const TaskList& a = after[r.index()];
        start.insert(start.end(), a.begin(), a.end());
      }
      const TwoTierMatrix m = scaled(gr.routed->tokens, token_bytes);
      Collectives c(plan_, b_.cluster, b_.env.nccl, ph);
      const std::int64_t chunk =
          job_.chunk_tokens > 0
              ? job_.chunk_tokens
              : default_chunk_tokens(job_.algorithm, static_cast<std::int64_t>(gr.ranks.size()),
                                     op);
      Exchange x{gr.ranks,
                 m,
                 op,
                 chunk * token_bytes,
                 job_.pieces_used(),
                 job_.comm_sms,
                 b_.env.ep_libraries(),
                 start,
                 new_layout};
      x.token_bytes = token_bytes;
      x.experts = model_.moe.routed_experts;
      x.own_bytes = tokens_mb_ * token_bytes;
      x.token_size = token_bytes;
      const Handle h = add_exchange(c, job_.algorithm, x);
      comm_free_[gi] = h.done;
      // Each GPU waits for what lands on it; one that receives nothing, for the exchange.
      for (PlanTaskId t : h.done) {
        arrived[plan_.tasks()[t].src.index()].push_back(t);
      }
      for (const topo::GpuId r : gr.ranks) {
        if (arrived[r.index()].empty()) {
          arrived[r.index()] = h.done;
        }
      }
    }
    return arrived;
  }
};

MoeBuilder::MoeBuilder(const MoeLayerJob& job, const BuildEnv& b, Plan& plan)
    : impl_(std::make_unique<Impl>(job, b, plan)) {}

MoeBuilder::~MoeBuilder() = default;

void MoeBuilder::forward() {
  impl_->forward();
}

void MoeBuilder::backward() {
  impl_->backward();
}

void MoeBuilder::pair() {
  impl_->pair();
}

void MoeBuilder::pair(const PairAttention& attention) {
  impl_->pair(&attention);
}

void MoeBuilder::join() {
  impl_->join();
}

std::vector<TaskList>& MoeBuilder::ready(std::int64_t mb) {
  return impl_->ready(mb);
}

EpDetails MoeBuilder::details() const {
  const Impl& builder = *impl_;
  const MoeLayerJob& job = builder.job();
  const BuildEnv& b = builder.build_env();
  EpDetails details;
  details.degree = b.env.mesh.spec().ep;
  details.groups = static_cast<std::int64_t>(builder.routing(0).size());
  details.micro_batches = job.micro_batches();
  details.compute_slowdown = job.compute_slowdown(b.env.cluster.gpu.sms);
  details.balance_steps = builder.balance_steps();
  details.placement = builder.placement();
  const std::size_t n = builder.routing(0).front().ranks.size();
  details.tokens_per_rank.assign(n, 0);
  double nodes = 0;
  double gpus = 0;
  for (std::int64_t mb = 0; mb < job.micro_batches(); ++mb) {
    const GroupTokens& gr = *builder.routing(mb).front().routed;
    const std::vector<std::int64_t>& taken = gr.load.expert_tokens;
    if (details.tokens_per_expert.empty()) {
      details.tokens_per_expert.assign(taken.size(), 0);
    }
    for (std::size_t e = 0; e < taken.size(); ++e) {
      details.tokens_per_expert[e] += taken[e];
      details.selections += taken[e];
    }
    details.selections += gr.load.dropped;
    details.dropped += gr.load.dropped;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        details.tokens_per_rank[j] += gr.tokens.selections.at(i, j);
        gpus += static_cast<double>(gr.tokens.gpu.at(i, j));
      }
    }
    nodes += static_cast<double>(
        std::accumulate(gr.tokens.to_node.begin(), gr.tokens.to_node.end(), std::int64_t{0}));
  }
  // Every token routed above: micro-batches x their tokens (two halves of a sequence with
  // two_microbatch, two whole sequences in a DualPipe pair) on each GPU of the group.
  const double tokens = static_cast<double>(job.micro_batch_tokens()) *
                        static_cast<double>(job.micro_batches()) * static_cast<double>(n);
  details.nodes_per_token_mean = nodes / tokens;
  details.gpus_per_token_mean = gpus / tokens;
  return details;
}

Case MoeLayerJob::build(const BuildEnv& b, std::int64_t simulated) const {
  HOPSIM_ASSERT(b.compute != nullptr && b.env.model != nullptr,
                "a MoE layer needs a compute model and a model");
  Plan plan;
  MoeBuilder builder(*this, b, plan);
  if (overlap == EpOverlap::DualPipePair) {
    for (std::int64_t l = 0; l < simulated; ++l) {
      builder.pair();
    }
  } else {
    if (forward()) {
      for (std::int64_t l = 0; l < simulated; ++l) {
        builder.forward();
      }
    }
    builder.join();
    if (backward()) {
      for (std::int64_t l = 0; l < simulated; ++l) {
        builder.backward();
      }
    }
  }
  EpDetails details = builder.details();
  details.layers_simulated = simulated;
  if (overlap != EpOverlap::None) {  // exchanges beside compute share its HBM
    details.hbm_share = exchange_hbm_share(plan, b.env.cluster.gpu.hbm_GBps * 1e9);
    share_hbm(plan, details.hbm_share);
  }
  Case out{
      "layer", std::move(plan), std::string(ep_algorithm_name(algorithm)), {}, std::move(details)};
  // Every GPU's tokens through router, shared and top-k routed experts (and the attention
  // projections when the layer has them); no attention scores (the kind has no sequence).
  const LayerParams lp = layer_params(*b.env.model, true);
  const double routed = static_cast<double>(b.env.model->moe.top_k) * lp.expert;
  const double per_token =
      2 * (lp.router + lp.shared_experts + routed + (attention ? lp.attention : 0));
  const double tokens =
      static_cast<double>(routing.tokens_per_gpu) * static_cast<double>(b.env.mesh.size());
  out.throughput =
      Throughput{b.env.mesh.size(), tokens,
                 tokens * per_token * static_cast<double>(layers) * model_flops_passes(passes),
                 b.env.cluster.gpu.peak_bf16_tflops};
  return out;
}

namespace {

std::string repeat_probe(std::int64_t layers) {
  return fmt::format("{} layer{} in a row", layers, layers == 1 ? "" : "s");
}

}  // namespace

std::vector<Probe> MoeLayerJob::probes(const BuildEnv& b) const {
  std::vector<Probe> out;
  if (repeat_layers && layers > kRepeatAbove) {
    for (std::int64_t n = kRepeatSimulated - 2; n <= kRepeatSimulated; ++n) {
      out.push_back({repeat_probe(n), build(b, n).plan});
    }
  }
  return out;
}

std::vector<Case> MoeLayerJob::cases(const BuildEnv& b, const Measured& measured) const {
  const std::int64_t k = kRepeatSimulated;
  if (measured.find(repeat_probe(k)) != nullptr) {
    // Every figure seen from the whole run's busiest GPU, which a short run need not share.
    const ProbeResult& last = measured.at(repeat_probe(k));
    const topo::GpuId rank =
        busiest_after(measured.at(repeat_probe(k - 1)).summary, last.summary, layers - k);
    const auto seen = [&](std::int64_t n) {
      const ProbeResult& p = measured.at(repeat_probe(n));
      return at_rank(p.summary, p.plan, p.outcome, rank);
    };
    Summary fewer = seen(k - 1);
    if (steady(seen(k - 2), fewer, seen(k))) {
      Case c = build(b, k);
      c.repeat = Repeat{layers, k, std::move(fewer), rank};
      return {std::move(c)};
    }
  }
  return {build(b, layers)};
}

}  // namespace hopsim::work
