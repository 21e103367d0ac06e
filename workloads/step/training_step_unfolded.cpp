// The unfolded training step: every GPU of the mesh in one plan, to check the folding against.
//
// Each pipeline op (a micro-batch's forward or backward through a model chunk) is the
// transformer-layer subgraph of its layers on every GPU of its stage (TP, CP and EP
// collectives included), copied from one built per shape; consecutive layers of one kind chain
// inside it, and a zero-time join closes each run of layers. Activations cross between
// stages as one flow per GPU (same TP, CP and DP coordinates); each layer's gradients sync as
// real collectives over the stage's DP groups when its last backward ends, one bucket after
// another; then every GPU's optimizer step and (ZeRO-1) the parameter all-gathers. Under
// ZeRO-3 every op runs layer by layer, each layer after its parameters' real all-gather
// (prefetched one layer ahead), and every backward reduce-scatters each layer's gradients.
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/jobs/collective_job.hpp"
#include "workloads/step/piece.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work::step_parts {
namespace {

double d(std::int64_t v) { return static_cast<double>(v); }

// A run of consecutive layers of one kind in one direction (or the output layer).
struct Segment {
  bool moe = false;
  bool forward = true;
  std::int64_t layers = 0;  // 0: the output layer
  std::int64_t last_index = -1;  // the model index of its layer, when it is one layer
};

class Unfolded {
 public:
  Unfolded(const TrainingStepJob& job, const BuildEnv& b)
      : job_(job),
        b_(b),
        p_(b.env.mesh.spec()),
        model_(*b.env.model),
        stage_spec_(stage_spec(p_)),
        stage_mesh_(stage_spec_),
        stage_env_{b.env.cluster, b.env.nccl, stage_mesh_, b.env.model, b.env.seed, b.env.deepep},
        stage_build_{stage_env_, b.cluster, b.compute},
        details_(base_details(job, b)),
        stages_(details_.stages * job.virtual_stages) {
    map_stage_gpus();
    join_phase_ = plan_.phase(PhaseKind::Join, PhasePass::Step);
    for (std::int64_t r = 0; r < p_.pp; ++r) {
      const std::int64_t here[] = {r};
      dense_groups_.push_back(dense_dp_groups(b_.env.mesh, here));
      expert_groups_.push_back(expert_dp_groups(b_.env.mesh, here));
    }
    sync_.op = job_.zero >= 1 ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
    sync_.algorithm = CollectiveAlgorithm::Auto;
    sync_.auto_protocol = true;
    sync_.streamed_rings = true;  // O(dp) flows, as the folded step
    gather_ = sync_;
    norm_ = sync_;
    norm_.op = CollectiveOp::AllReduce;
    gather_.op = CollectiveOp::AllGather;
  }

  std::vector<Case> build();

 private:
  const TrainingStepJob& job_;
  const BuildEnv& b_;
  const ParallelSpec& p_;
  const ModelSpec& model_;
  ParallelSpec stage_spec_;
  Mesh stage_mesh_;
  JobEnv stage_env_;
  BuildEnv stage_build_;
  StepDetails details_;
  int stages_;
  std::vector<std::vector<topo::GpuId>> gpu_of_;  // per pipeline rank, per stage-mesh rank
  std::map<std::tuple<bool, bool, std::int64_t>, Piece> pieces_;
  std::optional<Piece> head_[2];
  Plan plan_;
  std::uint32_t join_phase_ = 0;
  std::vector<std::vector<std::vector<topo::GpuId>>> dense_groups_;   // per pipeline rank
  std::vector<std::vector<std::vector<topo::GpuId>>> expert_groups_;  // per pipeline rank
  CollectiveJob sync_;    // the gradients' reduce-scatter (all-reduce under ZeRO-0)
  CollectiveJob gather_;  // the parameters' all-gather
  CollectiveJob norm_;    // gradient clipping's squared norm, all-reduced
  // What build() keeps between its parts. Per (stage, micro-batch, forward): the op's entry
  // and exit; per (rank, chunk): the joins of the last backward's layers (model index, join;
  // -1 the head's, not under ZeRO-3) and that backward's place in the rank's order.
  std::map<std::tuple<int, int, bool>, std::pair<PlanTaskId, PlanTaskId>> op_of_;
  std::vector<std::vector<std::vector<std::pair<std::int64_t, PlanTaskId>>>> last_layers_;
  std::vector<std::vector<std::size_t>> last_backward_at_;
  std::vector<PlanTaskId> rank_end_;  // per pipeline rank, its last op's exit
  // ZeRO-3: per pipeline rank, its last gradient reduce-scatter so far.
  std::vector<std::optional<PlanTaskId>> reduced_;
  std::uint32_t sync_phase_ = 0;
  std::uint32_t gather_fwd_ = 0;
  std::uint32_t gather_bwd_ = 0;
  double vocab_ = 0;  // the embedding's or the head's parameters per GPU

  // ZeRO-3's prefetch within one op: the last gather, and the entries of the current unit
  // and of the one before it.
  struct Prefetch {
    std::optional<PlanTaskId> gathered;
    PlanTaskId unit_start = 0;
    PlanTaskId prev_unit_start = 0;
  };

  // A collective over pipeline rank `rank`'s DP groups (dense bytes) and expert-DP groups
  // (expert bytes) after `after`; returns its join.
  PlanTaskId collective(int rank, const CollectiveJob& job, double dense, double expert,
                        double bytes_per_param, std::uint32_t phase,
                        const std::vector<PlanTaskId>& after) {
    const auto r = static_cast<std::size_t>(rank);
    const PlanTaskId join = plan_.add_delay(gpu_of_[r].front(), Time{}, join_phase_);
    const auto dense_bytes = static_cast<std::int64_t>(dense * bytes_per_param);
    const auto expert_bytes = static_cast<std::int64_t>(expert * bytes_per_param);
    std::vector<PlanTaskId> done = after;
    if (dense_bytes > 0 && !dense_groups_[r].empty()) {
      const Handle h =
          add_collectives(plan_, b_, job, dense_groups_[r], Bytes{dense_bytes}, phase, after);
      done.insert(done.end(), h.done.begin(), h.done.end());
    }
    if (expert_bytes > 0 && !expert_groups_[r].empty()) {
      const Handle h =
          add_collectives(plan_, b_, job, expert_groups_[r], Bytes{expert_bytes}, phase, after);
      done.insert(done.end(), h.done.begin(), h.done.end());
    }
    for (const PlanTaskId t : done) {
      plan_.add_dependency(t, join);
    }
    return join;
  }

  // A zero-time task after every one of `before`.
  PlanTaskId join(int rank, const std::vector<PlanTaskId>& before) {
    const PlanTaskId j =
        plan_.add_delay(gpu_of_[static_cast<std::size_t>(rank)].front(), Time{}, join_phase_);
    for (const PlanTaskId t : before) {
      plan_.add_dependency(t, j);
    }
    return j;
  }

  static ParallelSpec stage_spec(const ParallelSpec& p) {
    ParallelSpec s = p;
    s.pp = 1;
    return s;
  }

  // The full mesh's GPU for each stage-mesh rank: the one with its TP, CP and DP coordinates.
  void map_stage_gpus() {
    const Mesh& mesh = b_.env.mesh;
    gpu_of_.resize(static_cast<std::size_t>(p_.pp));
    for (std::int64_t s = 0; s < p_.pp; ++s) {
      for (int i = 0; i < stage_mesh_.size(); ++i) {
        gpu_of_[static_cast<std::size_t>(s)].emplace_back(
            mesh.rank_of(stage_mesh_.coordinate(i, Dim::Tp), stage_mesh_.coordinate(i, Dim::Cp), s,
                         stage_mesh_.coordinate(i, Dim::Dp)));
      }
    }
  }

  const Piece& piece(const Segment& seg) {
    if (seg.layers == 0) {  // the output layer: its GEMMs on every GPU of the last stage
      std::optional<Piece>& head = head_[seg.forward ? 0 : 1];
      if (!head) {
        Plan plan;
        const std::uint32_t phase = plan.phase(PhaseKind::Head, seg.forward ? PhasePass::Fwd : PhasePass::Bwd);
        const KernelCosts kernels =
            seg.forward ? details_.head.fwd : run_order(details_.head.bwd);
        for (int g = 0; g < stage_mesh_.size(); ++g) {
          for (const auto& [name, cost] : kernels) {
            plan.add_compute(ComputeTask{topo::GpuId{g}, cost.time, cost.flops, cost.source, phase,
                                         kComputeStream, name, cost.kind});
          }
        }
        head = make_piece(std::move(plan));
      }
      return *head;
    }
    const auto key = std::tuple{seg.moe, seg.forward, seg.layers};
    auto it = pieces_.find(key);
    if (it == pieces_.end()) {
      std::vector<Case> c =
          one_layer(job_.layer, seg.moe, seg.forward ? Passes::Forward : Passes::Backward,
                    seg.layers)
              .cases(stage_build_);
      it = pieces_.emplace(key, make_piece(std::move(c.front().plan))).first;
    }
    return it->second;
  }

  // Copies `seg`'s subgraph onto pipeline rank `rank`'s GPUs after `after`; returns its join.
  PlanTaskId add(const Segment& seg, int rank, PlanTaskId after) {
    return add_piece(plan_, piece(seg), gpu_of_[static_cast<std::size_t>(rank)], after,
                     join_phase_);
  }

  // The segments of one op: runs of same-kind layers (one layer each when `per_layer`),
  // forward in order, backward in reverse; full recompute runs the forward of the layers it
  // rebuilds again first.
  std::vector<Segment> segments(int stage, bool forward, bool per_layer) const {
    const auto st = static_cast<std::size_t>(stage);
    const std::int64_t n = details_.layers_per_stage[st];
    std::vector<Segment> runs;
    std::vector<bool> rebuilt;  // per run: whether full recomputation runs its forward again
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t first = details_.first_layer[st];
      const std::int64_t position = forward ? k : n - 1 - k;
      const bool moe = moe_at(job_, model_, first + position);
      const bool again = full_rebuilds(job_.recompute, position);
      if (!per_layer && !runs.empty() && runs.back().moe == moe && rebuilt.back() == again) {
        ++runs.back().layers;
      } else {
        runs.push_back({moe, forward, 1, first + position});
        rebuilt.push_back(again);
      }
    }
    std::vector<Segment> out;
    const bool last = stage == stages_ - 1;
    if (!forward && last) {
      out.push_back({false, false, 0, -1});
    }
    for (std::size_t k = 0; k < runs.size(); ++k) {
      if (!forward && rebuilt[k]) {
        out.push_back({runs[k].moe, true, runs[k].layers, -1});
      }
      out.push_back(runs[k]);
    }
    if (forward && last) {
      out.push_back({false, true, 0, -1});
    }
    return out;
  }

  // Sizes build()'s bookkeeping for pp pipeline ranks of v chunks, and adds the phases of the
  // ops' gathers and reductions.
  void start_build(int pp, int v) {
    last_layers_.assign(
        static_cast<std::size_t>(pp),
        std::vector<std::vector<std::pair<std::int64_t, PlanTaskId>>>(static_cast<std::size_t>(v)));
    last_backward_at_.assign(static_cast<std::size_t>(pp),
                             std::vector<std::size_t>(static_cast<std::size_t>(v), 0));
    rank_end_.assign(static_cast<std::size_t>(pp), PlanTaskId{});
    sync_phase_ = plan_.phase(PhaseKind::DpComm, PhasePass::Bwd);
    gather_fwd_ = plan_.phase(PhaseKind::ParamGather, PhasePass::Fwd);
    gather_bwd_ = plan_.phase(PhaseKind::ParamGather, PhasePass::Bwd);
    reduced_.assign(static_cast<std::size_t>(pp), std::nullopt);
    vocab_ = d(model_.vocab) * d(model_.hidden) / d(p_.tp);  // embedding or head
  }

  // Pipeline rank r's ops in its order, each after the one before: entered by a zero-time
  // task, recorded in op_of_.
  void add_rank_ops(int r, const std::vector<PipeOp>& ops) {
    for (std::size_t k = 0; k < ops.size(); ++k) {
      if (!ops[k].forward) {
        last_backward_at_[static_cast<std::size_t>(r)][static_cast<std::size_t>(ops[k].chunk)] = k;
      }
    }
    std::optional<PlanTaskId> prev;
    const topo::GpuId g0 = gpu_of_[static_cast<std::size_t>(r)].front();
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const PipeOp& op = ops[k];
      const int stage = op.chunk * details_.stages + r;
      const PlanTaskId in = plan_.add_delay(g0, Time{}, join_phase_);
      if (prev) {
        plan_.add_dependency(*prev, in);
      }
      const bool last =
          !op.forward &&
          k == last_backward_at_[static_cast<std::size_t>(r)][static_cast<std::size_t>(op.chunk)];
      const PlanTaskId cur = add_op(r, op, stage, in, last);
      op_of_[{stage, op.micro_batch, op.forward}] = {in, cur};
      prev = cur;
    }
    rank_end_[static_cast<std::size_t>(r)] = *prev;
  }

  // One op of rank r on stage `stage` after `in`, segment by segment (layer by layer for the
  // chunk's last backward and under ZeRO-3); returns its exit. `last`: the rank's last
  // backward through the chunk, whose layers' joins are recorded for the gradient buckets.
  PlanTaskId add_op(int r, const PipeOp& op, int stage, PlanTaskId in, bool last) {
    const bool zero3 = job_.zero >= 3;
    bool rebuilt = false;  // the segment before was a backward's recomputed forward
    PlanTaskId cur = in;
    // ZeRO-3: unit k's gather waits for the previous gather and for unit k - 1's entry
    // (which, with that gather, is when unit k - 1 can start computing: prefetch one ahead).
    Prefetch prefetch{std::nullopt, in, in};
    for (const Segment& seg : segments(stage, op.forward, last || zero3)) {
      // A unit: a layer's forward, its backward (with its recomputed forward), the head.
      const bool starts_unit = op.forward || seg.layers == 0 || seg.forward || !rebuilt;
      rebuilt = !op.forward && seg.forward && seg.layers > 0;
      if (zero3 && starts_unit) {
        cur = start_unit(r, seg, op.forward, prefetch, cur);
      }
      cur = add(seg, r, cur);
      if (zero3 && !op.forward && !seg.forward) {
        reduce_segment(r, stage, seg, last, cur);
      }
      if (last && !seg.forward && !zero3) {  // ZeRO-3 reduced them above
        last_layers_[static_cast<std::size_t>(r)][static_cast<std::size_t>(op.chunk)].push_back(
            {seg.layers == 0 ? -1 : seg.last_index, cur});
      }
    }
    return cur;
  }

  // ZeRO-3: a unit starts at `cur`; a layer's waits for its parameters' all-gather, prefetched
  // one unit ahead. Returns where the unit's segment starts.
  PlanTaskId start_unit(int r, const Segment& seg, bool forward, Prefetch& prefetch,
                        PlanTaskId cur) {
    prefetch.prev_unit_start = prefetch.unit_start;
    prefetch.unit_start = cur;
    if (seg.layers > 0) {
      const StageParams lp = layer_params_per_gpu(model_, p_, seg.moe);
      std::vector<PlanTaskId> after{prefetch.prev_unit_start};
      if (prefetch.gathered) {
        after.push_back(*prefetch.gathered);
      }
      prefetch.gathered = collective(r, gather_, lp.dense, lp.expert, 2,
                                     forward ? gather_fwd_ : gather_bwd_, after);
      cur = join(r, {cur, *prefetch.gathered});
    }
    return cur;
  }

  // ZeRO-3: a layer's gradients are reduce-scattered after each of its backwards, the head's
  // and the embedding's after the last backward only; one at a time.
  void reduce_segment(int r, int stage, const Segment& seg, bool last, PlanTaskId cur) {
    if (seg.layers > 0) {
      const StageParams lp = layer_params_per_gpu(model_, p_, seg.moe);
      reduce_grads(r, lp.dense, lp.expert, cur);
    }
    if (last && (seg.layers == 0 || (stage == 0 && seg.last_index == 0))) {
      reduce_grads(r, vocab_, 0, cur);
    }
  }

  // ZeRO-3: rank r's reduce-scatter of these gradients after `cur` and after its previous one.
  void reduce_grads(int r, double dense, double expert, PlanTaskId cur) {
    auto& chain = reduced_[static_cast<std::size_t>(r)];
    std::vector<PlanTaskId> after{cur};
    if (chain) {
      after.push_back(*chain);
    }
    chain = collective(r, sync_, dense, expert, job_.grad_bytes, sync_phase_, after);
  }

  // Activations and their gradients between stages, micro-batch by micro-batch: forward
  // stage by stage, the last stage's backward after its forward, backward down to the first.
  void link_stages(int m) {
    const std::uint32_t pp_fwd = plan_.phase(PhaseKind::PpComm, PhasePass::Fwd);
    const std::uint32_t pp_bwd = plan_.phase(PhaseKind::PpComm, PhasePass::Bwd);
    const Bytes act = job_.transfer_bytes(p_, model_);
    for (int mb = 0; mb < m; ++mb) {
      for (int s = 1; s < stages_; ++s) {
        cross(s - 1, s, op_of_.at({s - 1, mb, true}).second, op_of_.at({s, mb, true}).first, act,
              pp_fwd);
      }
      plan_.add_dependency(op_of_.at({stages_ - 1, mb, true}).second,
                           op_of_.at({stages_ - 1, mb, false}).first);
      for (int s = stages_ - 1; s > 0; --s) {
        cross(s, s - 1, op_of_.at({s, mb, false}).second, op_of_.at({s - 1, mb, false}).first, act,
              pp_bwd);
      }
    }
  }

  // `before` on from_stage, then `after` on to_stage: one flow of `act` in `phase` per stage
  // GPU between two ranks, directly within one.
  void cross(int from_stage, int to_stage, PlanTaskId before, PlanTaskId after, Bytes act,
             std::uint32_t phase) {
    const int pp = details_.stages;
    const auto& from = gpu_of_[static_cast<std::size_t>(from_stage % pp)];
    const auto& to = gpu_of_[static_cast<std::size_t>(to_stage % pp)];
    if (from_stage % pp == to_stage % pp) {
      plan_.add_dependency(before, after);
      return;
    }
    for (std::size_t i = 0; i < from.size(); ++i) {
      const PlanTaskId f = plan_.add_flow(from[i], to[i], act, phase);
      plan_.add_dependency(before, f);
      plan_.add_dependency(f, after);
    }
  }

  // The end of pipeline rank r's step: its gradient buckets chunk by chunk, every GPU's
  // optimizer step after them and (ZeRO >= 1) the parameter all-gather.
  void add_rank_end(int r, const StepShape& shape, const std::vector<StageParams>& params,
                    std::uint32_t optimizer_phase, std::uint32_t gather_phase) {
    const int pp = details_.stages;
    PlanTaskId bucket = rank_end_[static_cast<std::size_t>(r)];
    std::optional<PlanTaskId> prev = reduced_[static_cast<std::size_t>(r)];  // ZeRO-3's layers
    double dense_local = 0;
    double expert_local = 0;
    for (const int c : chunks_by_last_backward(r)) {
      const int stage = c * pp + r;
      prev = add_buckets(r, c, prev);
      if (job_.zero >= 3) {  // the layers were gathered as used; the vocabulary is gathered here
        dense_local += vocab_params(shape, stage);
      } else {
        dense_local += params[static_cast<std::size_t>(stage)].dense;
        expert_local += params[static_cast<std::size_t>(stage)].expert;
      }
    }
    if (prev) {
      bucket = *prev;
    }
    const std::vector<PlanTaskId> optimizers = add_optimizers(r, shape, bucket, optimizer_phase);
    std::vector<PlanTaskId> last = optimizers;
    if (job_.zero >= 1) {
      last = {collective(r, gather_, dense_local, expert_local, 2, gather_phase, optimizers)};
    }
    for (const topo::GpuId g : gpu_of_[static_cast<std::size_t>(r)]) {
      add_step_overhead(plan_, details_, job_, g, last);
    }
  }

  // Rank r's chunks in the order of their last backwards.
  std::vector<int> chunks_by_last_backward(int r) const {
    std::vector<int> chunk_order(static_cast<std::size_t>(job_.virtual_stages));
    std::iota(chunk_order.begin(), chunk_order.end(), 0);
    std::sort(chunk_order.begin(), chunk_order.end(), [&](int a, int c) {
      return last_backward_at_[static_cast<std::size_t>(r)][static_cast<std::size_t>(a)] <
             last_backward_at_[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
    });
    return chunk_order;
  }

  // The gradient buckets of rank r's last backward through chunk c, after `prev` and one
  // after the other: each layer's as it is done (the embedding's with the first layer), the
  // head's; returns the last.
  std::optional<PlanTaskId> add_buckets(int r, int c, std::optional<PlanTaskId> prev) {
    const int stage = c * details_.stages + r;
    for (const auto& [index, computed] :
         last_layers_[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)]) {
      std::vector<PlanTaskId> after{computed};
      if (prev) {
        after.push_back(*prev);
      }
      if (index < 0) {  // the output layer
        prev = collective(r, sync_, vocab_, 0, job_.grad_bytes, sync_phase_, after);
        continue;
      }
      const StageParams lp = layer_params_per_gpu(model_, p_, moe_at(job_, model_, index));
      prev = collective(r, sync_, lp.dense, lp.expert, job_.grad_bytes, sync_phase_, after);
      after = {*prev};
      if (stage == 0 && index == 0) {  // the embedding, with the first layer
        prev = collective(r, sync_, vocab_, 0, job_.grad_bytes, sync_phase_, after);
      }
    }
    return prev;
  }

  // The optimizer step on every GPU of rank r, after its last gradient bucket and its last op:
  // the gradients' local norm, its all-reduce over DP, then Adam (optimizer_cost).
  std::vector<PlanTaskId> add_optimizers(int r, const StepShape& shape, PlanTaskId bucket,
                                         std::uint32_t phase) {
    const topo::GpuSpec& gpu = b_.env.cluster.gpu;
    const OptimizerCost cost = optimizer_cost(shape, r, gpu.hbm_GBps * 1e9 * gpu.memory_efficiency);
    std::vector<PlanTaskId> norms;
    for (const topo::GpuId g : gpu_of_[static_cast<std::size_t>(r)]) {
      const PlanTaskId n = plan_.add_compute(ComputeTask{
          g, cost.grad_norm, Flops{}, Source::Roofline, phase, kComputeStream, "gradient norm"});
      plan_.add_dependency(bucket, n);
      plan_.add_dependency(rank_end_[static_cast<std::size_t>(r)], n);
      norms.push_back(n);
    }
    const PlanTaskId reduced = collective(r, norm_, 1, 0, 4, phase, norms);
    std::vector<PlanTaskId> optimizers;
    for (const topo::GpuId g : gpu_of_[static_cast<std::size_t>(r)]) {
      const PlanTaskId o = plan_.add_compute(
          ComputeTask{g, cost.adam, Flops{}, Source::Roofline, phase, kComputeStream, "optimizer"});
      plan_.add_dependency(reduced, o);
      optimizers.push_back(o);
    }
    return optimizers;
  }
};

std::vector<Case> Unfolded::build() {
  const int pp = details_.stages;
  const int v = job_.virtual_stages;
  const int m = static_cast<int>(details_.micro_batches);
  const std::vector<std::vector<PipeOp>> order = pipeline_order(job_.schedule, pp, m, v, job_.microbatch_group);
  start_build(pp, v);
  for (int r = 0; r < pp; ++r) {
    add_rank_ops(r, order[static_cast<std::size_t>(r)]);
  }
  link_stages(m);

  // Gradient buckets, the optimizer and the parameter gathers, stage by stage.
  const std::uint32_t optimizer_phase = plan_.phase(PhaseKind::Optimizer, PhasePass::Step);
  const std::uint32_t gather_phase = plan_.phase(PhaseKind::ParamGather, PhasePass::Step);
  const StepShape shape = job_.shape(b_.env);
  const std::vector<StageParams> params = stage_params(shape);
  for (int r = 0; r < pp; ++r) {
    add_rank_end(r, shape, params, optimizer_phase, gather_phase);
  }
  details_.folding = fmt::format("unfolded: all {} GPUs in one plan", details_.gpus);
  std::vector<Case> out;
  out.push_back(Case{fmt::format("{} {} pp{} x{} m{} unfolded", TrainingStepJob::kKind,
                                 details_.schedule, p_.pp, v, m),
                     std::move(plan_),
                     fmt::format("{}, zero {}", details_.schedule, job_.zero),
                     {},
                     std::move(details_)});
  return out;
}

}  // namespace

std::vector<Case> unfolded_cases(const TrainingStepJob& job, const BuildEnv& b) {
  return Unfolded(job, b).build();
}

}  // namespace hopsim::work::step_parts
