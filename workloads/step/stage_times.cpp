// Each model stage's op times on each pipeline rank (stage_times.hpp).
#include "workloads/step/stage_times.hpp"

#include <algorithm>
#include <numeric>

#include "workloads/step/param_prefetch.hpp"

namespace hopsim::work::step_parts {
namespace {

GradSync grad_sync(const TrainingStepJob& job, const ModelSpec& model, const ParallelSpec& p,
                   bool moe, const StepMeasurements& m) {
  GradSync g;
  g.moe = moe;
  const StageParams params = layer_params_per_gpu(model, p, moe);
  g.time = m.dp_time(layer_sync_key(job, model, p, moe));
  g.bytes_per_gpu = (params.dense + params.expert) * job.grad_bytes;
  if (job.zero >= 3) {
    g.gather = m.dp_time(layer_gather_key(model, p, moe));
  }
  return g;
}

// The output layer's kernels of one pass, each at the rank's slowest GPU's speed for its class
// (1: healthy, their sum as measured).
Time head_time(const KernelCosts& kernels, const KernelSpeeds& speed) {
  Time sum;
  for (const auto& [name, cost] : kernels) {
    sum += at_speed(cost.time, speed[static_cast<std::size_t>(cost.kind)]);
  }
  return sum;
}

// The weight-gradient kernels of `kernels` (what a deferred weight part runs).
KernelCosts weight_kernels(const KernelCosts& kernels) {
  KernelCosts out;
  for (const auto& entry : kernels) {
    if (entry.second.kind == KernelClass::GemmWgrad ||
        entry.second.kind == KernelClass::GroupedWgrad) {
      out.push_back(entry);
    }
  }
  return out;
}

// One rank's view of the model stages' layers.
struct RankLayers {
  const TrainingStepJob& job;
  const ModelSpec& model;
  const StepDetails& details;
  const StepMeasurements& m;

  std::int64_t count(int stage) const {
    return details.layers_per_stage[static_cast<std::size_t>(stage)];
  }

  const LayerTiming& timing(int stage, std::int64_t k) const {
    return moe_at(job, model, details.first_layer[static_cast<std::size_t>(stage)] + k) ? *m.sparse
                                                                                        : *m.dense;
  }

  bool last(int stage) const {
    return stage == static_cast<int>(details.layers_per_stage.size()) - 1;
  }
};

// Stage `s`'s forward and backward over its layers in order (the head last) and back (the
// head first); under ZeRO-3 each layer waits for its parameters' gather, prefetched. In a
// backward a layer's gather shares the DP links with the reduce-scatters of the layers that
// computed before it: each gather is charged with one layer's reduce-scatter, its own layer's
// (the same size, except where dense and MoE layers meet).
StageTime passes(const RankLayers& l, const Syncs& syncs, int s) {
  std::vector<Time> fwd;
  std::vector<Time> bwd;
  std::vector<Time> gather;
  std::vector<Time> gather_back;
  StageTime out;
  Time exposed;  // what the layers' input parts take beyond their backward less weight
  const std::int64_t n = l.count(s);
  const bool zero3 = l.job.zero >= 3;
  for (std::int64_t k = 0; k < n; ++k) {
    const LayerTiming& t = l.timing(s, k);
    const GradSync& sync = *(t.moe ? syncs.moe : syncs.dense);
    fwd.push_back(t.forward);
    bwd.insert(bwd.begin(), backward_at(l.job, t, k));
    out.weight += t.weight;
    exposed += t.backward_input + t.weight - t.backward;
    gather.push_back(zero3 ? sync.gather : Time{});
    gather_back.insert(gather_back.begin(), zero3 ? sync.gather + sync.time : Time{});
  }
  for (std::size_t k = 0; k < l.details.offload_wait_forward.size(); ++k) {  // pp 1 only
    fwd[k + 1] += l.details.offload_wait_forward[k];
    bwd[static_cast<std::size_t>(n) - 1 - k] += l.details.offload_wait_backward[k];
  }
  if (l.last(s)) {
    fwd.push_back(head_time(l.details.head.fwd, l.m.speed));
    gather.push_back(Time{});
    bwd.insert(bwd.begin(), head_time(l.details.head.bwd, l.m.speed));
    gather_back.insert(gather_back.begin(), Time{});
    out.weight += head_time(weight_kernels(l.details.head.bwd), l.m.speed);
  }
  out.forward = prefetched_pass(fwd, gather);
  out.backward = prefetched_pass(bwd, gather_back);
  out.backward_input = out.backward - out.weight + exposed;
  out.pieces = static_cast<int>(n);
  const auto sum = [](const std::vector<Time>& v) {
    return std::accumulate(v.begin(), v.end(), Time{});
  };
  out.gathers_waited = out.forward - sum(fwd) + out.backward - sum(bwd);
  return out;
}

// A pair of stage sf's forward and stage sb's backward (stage_times.hpp).
Time pair_time(const RankLayers& l, int sf, int sb) {
  Time t;
  const std::int64_t n = std::max(l.count(sf), l.count(sb));
  for (std::int64_t k = 0; k < n; ++k) {
    const bool has_f = k < l.count(sf);
    const bool has_b = k < l.count(sb);
    if (has_f && has_b && l.timing(sf, k).moe && l.timing(sb, k).moe) {
      t += pair_at(l.job, l.timing(sf, k), k);
    } else if (has_f && has_b) {
      t += mixed_pair(l.timing(sf, k), backward_at(l.job, l.timing(sb, k), k), l.timing(sb, k));
    } else if (has_f) {
      t += l.timing(sf, k).forward;
    } else {
      t += backward_at(l.job, l.timing(sb, k), k);
    }
  }
  if (l.last(sf)) {
    t += head_time(l.details.head.fwd, l.m.speed);
  }
  if (l.last(sb)) {
    t += head_time(l.details.head.bwd, l.m.speed);
  }
  return t;
}

}  // namespace

Time mixed_pair(const LayerTiming& f, Time backward, const LayerTiming& b) {
  const Time f_compute = f.forward - f.ep_exposed_forward;
  const Time b_compute = backward - b.ep_exposed_backward;
  const Time hidden =
      std::min(b.ep_exposed_backward, f_compute) + std::min(f.ep_exposed_forward, b_compute);
  return f.forward + backward - hidden;
}

Syncs syncs_of(const TrainingStepJob& job, const BuildEnv& b, const StepMeasurements& m) {
  const ModelSpec& model = *b.env.model;
  const ParallelSpec& p = b.env.mesh.spec();
  Syncs syncs;
  for (const bool moe : {false, true}) {
    if (moe ? m.sparse : m.dense) {
      (moe ? syncs.moe : syncs.dense) = grad_sync(job, model, p, moe, m);
    }
  }
  return syncs;
}

StageTimes::StageTimes(const TrainingStepJob& job, const StepShape& shape,
                       const StepDetails& details, const std::vector<StepMeasurements>& views,
                       const std::vector<Syncs>& syncs) {
  const ModelSpec& model = *shape.model;
  for (std::size_t r = 0; r < views.size(); ++r) {
    const int rank = static_cast<int>(r);
    const RankLayers layers{job, model, details, views[r]};
    const std::vector<int> held = rank_stages(shape, rank);
    for (const int s : held) {
      stages_.emplace(std::pair{rank, s}, passes(layers, syncs[r], s));
    }
    if (!job.schedule->pairs) {
      continue;
    }
    for (const int sf : held) {
      for (const int sb : held) {
        pairs_.emplace(std::tuple{rank, sf, sb}, pair_time(layers, sf, sb));
      }
    }
  }
}

std::optional<double> closed_form_bubble(const TrainingStepJob& job, const StepShape& shape,
                                         const StageTimes& times) {
  StageOpTimes mean{0, 0, 0, 0};
  for (const auto& [at, t] : times.stages()) {
    mean.forward += t.forward.seconds();
    mean.backward += t.backward.seconds();
    mean.weight += t.weight.seconds();
  }
  const auto n = static_cast<double>(times.stages().size());
  mean.forward /= n;
  mean.backward /= n;
  mean.weight /= n;
  double pairs = 0;
  double count = 0;
  for (const auto& [at, t] : times.pairs()) {
    if (std::get<1>(at) != std::get<2>(at)) {
      pairs += t.seconds();
      ++count;
    }
  }
  mean.pair = count > 0 ? pairs / count : mean.forward + mean.backward;
  return ideal_bubble_fraction(*job.schedule, pipe_shape(shape), mean);
}

}  // namespace hopsim::work::step_parts
