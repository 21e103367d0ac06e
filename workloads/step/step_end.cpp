// A rank's gradient buckets and the end of its step (step_end.hpp).
#include "workloads/step/step_end.hpp"

#include <algorithm>
#include <map>

namespace hopsim::work::step_parts {
namespace {

// Per model stage, the position in `ops` of the last op computing its weight gradients.
std::map<int, std::size_t> last_weight_ops(const std::vector<LaidOp>& ops) {
  std::map<int, std::size_t> out;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    if (const auto s = weights_of(ops[k].op)) {
      out[*s] = k;
    }
  }
  return out;
}

// What each bucket of one op waits for beyond its piece: the other holders of its stage done
// with its gradients, and the rank's bucket before it.
struct BucketChain {
  std::vector<PlanTaskId> holders;
  std::optional<PlanTaskId> prev;
};

// The other ranks' last ops computing stage `stage`'s weight gradients: those of `sharers`
// (the ranks that share a stage with this one) that hold it.
std::vector<PlanTaskId> other_holders(const LaidPipeline& laid,
                                      const std::vector<std::map<int, std::size_t>>& sharers,
                                      const std::vector<int>& sharer_ranks, int stage) {
  std::vector<PlanTaskId> out;
  for (std::size_t i = 0; i < sharers.size(); ++i) {
    if (const auto it = sharers[i].find(stage); it != sharers[i].end()) {
      out.push_back(laid[static_cast<std::size_t>(sharer_ranks[i])][it->second].tasks.last());
    }
  }
  return out;
}

}  // namespace

std::optional<PlanTaskId> add_buckets(Plan& plan, SyncSource& sync, const TrainingStepJob& job,
                                      const StepShape& shape, const StepDetails& details,
                                      const LaidPipeline& laid, int rank, bool every_op) {
  const ModelSpec& model = *shape.model;
  const ParallelSpec& p = shape.parallel;
  const int stages = model_stages(shape);
  const auto& ops = laid[static_cast<std::size_t>(rank)];
  const std::map<int, std::size_t> last = last_weight_ops(ops);
  std::vector<int> sharer_ranks = sharing_ranks(shape, rank);
  sharer_ranks.erase(sharer_ranks.begin());  // itself
  std::vector<std::map<int, std::size_t>> sharers;
  for (const int q : sharer_ranks) {
    sharers.push_back(last_weight_ops(laid[static_cast<std::size_t>(q)]));
  }
  BucketChain chain;
  int stage = 0;
  const auto bucket = [&](PlanTaskId piece, const DpKey& key) {
    std::vector<PlanTaskId> after{piece};
    after.insert(after.end(), chain.holders.begin(), chain.holders.end());
    if (chain.prev) {
      after.push_back(*chain.prev);
    }
    if (const std::optional<PlanTaskId> end = sync.bucket(plan, rank, stage, key, after)) {
      chain.prev = end;
    }
  };
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const std::optional<int> s = weights_of(ops[k].op);
    const bool is_last = s && last.at(*s) == k;
    if (!s || (!is_last && !every_op)) {
      continue;
    }
    chain.holders = other_holders(laid, sharers, sharer_ranks, *s);
    stage = *s;
    const auto& pieces = ops[k].tasks.pieces;
    const auto first = details.first_layer[static_cast<std::size_t>(*s)];
    const auto n = details.layers_per_stage[static_cast<std::size_t>(*s)];
    if (*s == stages - 1 && is_last) {
      bucket(pieces.front().second, vocab_sync_key(job, model, p));  // the head's come first
    }
    for (std::int64_t j = 0; j < n; ++j) {  // backward: the last layer first
      const auto piece = static_cast<std::int64_t>(pieces.size()) == n
                             ? pieces[static_cast<std::size_t>(j)]
                             : pieces.back();
      bucket(piece.second, layer_sync_key(job, model, p, moe_at(job, model, first + n - 1 - j)));
    }
    if (*s == 0 && is_last) {
      bucket(pieces.back().second, vocab_sync_key(job, model, p));
    }
  }
  return chain.prev;
}

RankEnd add_rank_end(Plan& plan, SyncSource& sync, StepDetails& details, const TrainingStepJob& job,
                     const StepShape& shape, int rank, PlanTaskId last_op,
                     std::optional<PlanTaskId> last_bucket) {
  const std::uint32_t phase = plan.phase(PhaseKind::Optimizer, PhasePass::Step);
  const OptimizerCost cost = optimizer_cost(shape, rank, sync.optimizer_bytes_per_s(rank));
  const std::vector<topo::GpuId> gpus = sync.gpus(rank);
  std::vector<PlanTaskId> norms;
  for (const topo::GpuId g : gpus) {
    const PlanTaskId n = plan.add_compute(ComputeTask{g, cost.grad_norm, Flops{}, Source::Roofline,
                                                      phase, kComputeStream, "gradient norm"});
    plan.add_dependency(last_op, n);
    if (last_bucket) {
      plan.add_dependency(*last_bucket, n);
    }
    norms.push_back(n);
  }
  const std::optional<PlanTaskId> reduced =
      sync.collective(plan, rank, norm_key(), PhaseKind::Optimizer, PhasePass::Step,
                      "gradient-norm all-reduce", norms);
  std::vector<PlanTaskId> adams;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const PlanTaskId o = plan.add_compute(ComputeTask{gpus[i], cost.adam, Flops{}, Source::Roofline,
                                                      phase, kComputeStream, "optimizer"});
    plan.add_dependency(reduced ? *reduced : norms[i], o);
    adams.push_back(o);
  }
  OptimizerParts& parts = details.optimizer;
  parts.grad_norm = std::max(parts.grad_norm, cost.grad_norm);
  parts.adam = std::max(parts.adam, cost.adam);
  parts.norm_all_reduce = std::max(parts.norm_all_reduce, sync.measured(rank, norm_key()));
  const DpKey gather = param_gather_key(job, shape, rank);
  details.param_gather = std::max(details.param_gather, sync.measured(rank, gather));
  // ZeRO-1: every DP rank gathers the others' updated shards. ZeRO-3 gathers its layers as
  // it uses them; only the vocabulary's parameters, kept whole, are gathered here.
  const std::optional<PlanTaskId> gathered = sync.collective(
      plan, rank, gather, PhaseKind::ParamGather, PhasePass::Step, "parameter all-gather", adams);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const PlanTaskId after = gathered ? *gathered : adams[i];
    add_step_overhead(plan, details, job, gpus[i], std::span<const PlanTaskId>(&after, 1));
  }
  return {std::move(norms), reduced, std::move(adams), gathered};
}

void share_rank_ends(Plan& plan, const StepShape& shape, const std::vector<RankEnd>& ends) {
  for (std::size_t r = 0; r < ends.size(); ++r) {
    for (const int q : sharing_ranks(shape, static_cast<int>(r))) {
      if (q == static_cast<int>(r)) {
        continue;
      }
      const RankEnd& other = ends[static_cast<std::size_t>(q)];
      for (const auto& [waits, on] :
           {std::pair{ends[r].reduced, &other.norms}, std::pair{ends[r].gathered, &other.adams}}) {
        for (const PlanTaskId t : waits ? *on : std::vector<PlanTaskId>{}) {
          plan.add_dependency(t, *waits);
        }
      }
    }
  }
}

}  // namespace hopsim::work::step_parts
