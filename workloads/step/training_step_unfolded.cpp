// The unfolded training step: every GPU of the mesh in one plan, to check the folding against.
// The schedule's order is laid like the folded step's (pipeline_layout.hpp), each op the real
// layer subgraphs of its stage (unfolded_ops.hpp), then each rank's gradient buckets and the end
// of its step (step_end.hpp) as real collectives over its stages' DP groups.
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "workloads/step/step_end.hpp"
#include "workloads/step/unfolded_ops.hpp"

namespace hopsim::work::step_parts {
namespace {

// Real collectives over each rank's DP groups. Where ranks share stages (DualPipe), the
// holders of a stage run one collective over the groups spanning them all, after every
// holder's tasks: the first to ask adds it, the others wait for it too.
class UnfoldedSyncs final : public SyncSource {
 public:
  explicit UnfoldedSyncs(const UnfoldedStage& stage) : stage_(stage) {
    const int pp = static_cast<int>(stage.shape().parallel.pp);
    for (int r = 0; r < pp; ++r) {
      leader_.push_back(sharing_ranks(stage.shape(), r).front());
      for (const int q : sharing_ranks(stage.shape(), r)) {
        leader_.back() = std::min(leader_.back(), q);
      }
    }
    hbm_ = stage.build().env.cluster.gpu.hbm_GBps * 1e9 *
           stage.build().env.cluster.gpu.memory_efficiency;
  }

  std::optional<PlanTaskId> bucket(Plan& plan, int rank, int stage, const DpKey& key,
                                   std::span<const PlanTaskId> after) override {
    const int index = asked_[{rank, stage}]++;
    if (key.empty()) {
      return std::nullopt;
    }
    return shared(plan, {-1 - stage, index, key}, rank, key,
                  plan.phase(PhaseKind::DpComm, PhasePass::Bwd), after);
  }

  std::optional<PlanTaskId> collective(Plan& plan, int rank, const DpKey& key, PhaseKind kind,
                                       PhasePass pass, std::string_view /*label*/,
                                       std::span<const PlanTaskId> after) override {
    if (key.empty()) {
      return std::nullopt;
    }
    return shared(plan, {leader_[static_cast<std::size_t>(rank)], static_cast<int>(kind), key},
                  rank, key, plan.phase(kind, pass), after);
  }

  Time measured(int, const DpKey&) const override { return Time{}; }

  std::vector<topo::GpuId> gpus(int rank) const override { return stage_.gpus(rank); }

  double optimizer_bytes_per_s(int) const override { return hbm_; }

 private:
  using Key = std::tuple<int, int, DpKey>;

  // The collective `at`: added after `after` the first time, waited for by later askers.
  PlanTaskId shared(Plan& plan, const Key& at, int rank, const DpKey& key, std::uint32_t phase,
                    std::span<const PlanTaskId> after) {
    const auto it = added_.find(at);
    if (it != added_.end()) {
      for (const PlanTaskId a : after) {
        plan.add_dependency(a, it->second.first);
      }
      return it->second.second;
    }
    const PlanTaskId start = stage_.join(plan, rank, after);
    const PlanTaskId one[] = {start};
    const PlanTaskId end = stage_.collective(plan, rank, key.op, key.dense, key.expert, phase, one);
    added_.emplace(at, std::pair{start, end});
    return end;
  }

  const UnfoldedStage& stage_;
  std::vector<int> leader_;  // per rank, the first rank sharing its stages
  double hbm_ = 0;
  std::map<std::pair<int, int>, int> asked_;  // buckets asked per (rank, stage)
  std::map<Key, std::pair<PlanTaskId, PlanTaskId>> added_;
};

}  // namespace

std::vector<Case> unfolded_cases(const TrainingStepJob& job, const BuildEnv& b) {
  Plan plan;
  UnfoldedStage stage(job, b, plan);
  StepDetails details = base_details(job, b);
  const StepShape& shape = stage.shape();
  const PipeShape pipe = pipe_shape(shape);
  const PipeOrder order = schedule_order(*job.schedule, pipe);
  UnfoldedOps ops(stage, details, order, plan);
  const LaidPipeline laid = lay_pipeline(plan, order, model_stages(shape), pipe.micro_batches, ops);
  UnfoldedSyncs syncs(stage);
  for (int r = 0; r < pipe.ranks; ++r) {
    const std::optional<PlanTaskId> last_bucket =
        job.zero >= 3 ? ops.reduced(r)  // its ops reduced each layer's gradients
                      : add_buckets(plan, syncs, job, shape, details, laid, r, false);
    (void)add_rank_end(plan, syncs, details, job, shape, r,
                       laid[static_cast<std::size_t>(r)].back().tasks.last(), last_bucket);
  }
  details.folding = fmt::format("unfolded: all {} GPUs in one plan", details.gpus);
  std::vector<Case> out;
  out.push_back(Case{fmt::format("{} {} pp{} x{} m{} unfolded", TrainingStepJob::kKind,
                                 details.schedule, pipe.ranks, pipe.chunks, pipe.micro_batches),
                     std::move(plan),
                     fmt::format("{}, zero {}", details.schedule, job.zero),
                     {},
                     std::move(details)});
  return out;
}

}  // namespace hopsim::work::step_parts
