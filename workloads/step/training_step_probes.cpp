// The folded training step's probes: what it declares (probes()), and the measurements it
// reads back from them (measure_step()).
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "workloads/costs/recompute_kernels.hpp"
#include "workloads/plan/critical_path.hpp"
#include "workloads/step/backward_parts.hpp"
#include "workloads/step/partial_fold.hpp"
#include "workloads/step/piece.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work {
namespace step_parts {
namespace {

CollectiveOp sync_op(const TrainingStepJob& job) {
  return job.zero >= 1 ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
}

DpKey dp_key(CollectiveOp op, double dense_bytes, double expert_bytes) {
  return {op, static_cast<std::int64_t>(dense_bytes), static_cast<std::int64_t>(expert_bytes)};
}

// One layer group: the mesh the layer probes run on, and the environment they build in.
struct LayerGroup {
  explicit LayerGroup(const BuildEnv& b)
      : mesh(TrainingStepJob::layer_spec(b.env.mesh.spec())),
        env{.cluster = b.env.cluster,
            .nccl = b.env.nccl,
            .mesh = mesh,
            .model = b.env.model,
            .seed = b.env.seed,
            .libraries = b.env.libraries,
            .speeds = b.env.speeds},
        build{env, b.cluster, b.compute, b.routings} {}

  LayerGroup(const LayerGroup&) = delete;
  LayerGroup& operator=(const LayerGroup&) = delete;
  Mesh mesh;
  JobEnv env;
  BuildEnv build;
};

// A backward probe's parts as a zero-bubble schedule runs them (backward_parts.hpp): the
// weight part, the most any GPU's weight-gradient kernels take; the input part, the backward
// without them, each other task as long as it took in the probe (critical_path.hpp).
void add_backward_parts(const ProbeResult& r, LayerTiming& t) {
  std::map<topo::GpuId, Time> per_gpu;
  std::vector<char> weight;
  weight.reserve(r.plan.tasks().size());
  for (const PlanTask& task : r.plan.tasks()) {
    weight.push_back(static_cast<char>(weight_kernel(task)));
    if (weight.back() != 0) {
      per_gpu[task.src] += task.duration;
    }
  }
  for (const auto& [gpu, time] : per_gpu) {
    t.weight = std::max(t.weight, time);
  }
  t.backward_input = makespan_without(r.plan, r.outcome, weight);
}

// One pass's probe into `t`: its time, the busiest GPU's compute and communication, the
// exposed communication by kind and (forward) the GEMMs' time.
void add_pass(const ProbeResult& r, Passes passes, LayerTiming& t,
              std::map<std::string, Time>& exposed, ComputeTally& sources) {
  const Summary& s = r.summary;
  (passes == Passes::Forward ? t.forward : t.backward) = r.outcome.makespan;
  const RankTime& busiest = s.ranks[s.critical_rank.index()];
  t.compute += busiest.compute;
  t.comm += busiest.comm;
  for (const Source src : kSources) {
    sources.add(src, s.compute_sources.time(src));
  }
  for (std::size_t ph = 0; ph < s.phases.size(); ++ph) {
    const PhaseKind kind = r.plan.phases()[ph].kind;
    exposed[std::string(exposed_as(kind))] += s.phases[ph].exposed;
    if (kind == PhaseKind::Dispatch || kind == PhaseKind::Combine) {
      (passes == Passes::Forward ? t.ep_exposed_forward : t.ep_exposed_backward) +=
          s.phases[ph].exposed;
    }
  }
  t.kernels.add(s.compute_kernels);
  if (passes == Passes::Forward) {
    t.forward_kernels.add(s.compute_kernels);
  }
  if (passes == Passes::Backward) {
    add_backward_parts(r, t);
  }
}

}  // namespace

Plan dp_plan(const TrainingStepJob& job, const BuildEnv& b, const DpKey& key, std::int64_t stage) {
  std::vector<std::int64_t> stages;  // DualPipe: stage r also sits on rank pp - 1 - r
  for (const int r : sharing_ranks(job.shape(b.env), static_cast<int>(stage))) {
    stages.push_back(r);
  }
  CollectiveJob sync;
  sync.op = key.op;
  sync.algorithm = CollectiveAlgorithm::Auto;
  sync.auto_protocol = true;
  sync.streamed_rings = true;  // O(dp) flows: DP groups of thousands of ranks
  Plan plan;
  if (key.dense > 0) {
    add_collectives(plan, b, sync, dense_dp_groups(b.env.mesh, stages), Bytes{key.dense});
  }
  if (key.expert > 0) {
    add_collectives(plan, b, sync, expert_dp_groups(b.env.mesh, stages), Bytes{key.expert});
  }
  return plan;
}

Plan layer_plan(const TrainingStepJob& job, const BuildEnv& b, bool moe, Passes passes) {
  const LayerGroup group(b);
  return std::move(one_layer(job.layer, moe, passes).cases(group.build).front().plan);
}

Time selective_recompute_time(const TrainingStepJob& job, const ModelSpec& m, bool moe,
                              const KernelTally& forward, int gpus, Time ep_forward) {
  if (job.recompute.granularity != Recompute::Selective) {
    return Time{};
  }
  const std::uint8_t mods = job.recompute.modules;
  const bool whole_moe = moe && has_module(mods, RecomputeModule::Moe);
  // Whole classes of the forward's kernels, and the GEMMs a module runs again as their share
  // of the forward GEMMs' time, by parameters.
  double ps = 0;
  for (std::size_t k = 0; k < kKernelClasses; ++k) {
    const auto kind = static_cast<KernelClass>(k);
    if (recomputed_class(mods, m, moe, kind)) {
      ps += static_cast<double>(forward.time(kind).count_ps());
    }
  }
  const LayerParams lp = layer_params(m, moe);
  double params = 0;
  if (has_module(mods, RecomputeModule::Mlp) && !moe) {
    params += lp.mlp;
  }
  if (has_module(mods, RecomputeModule::MlaUpProj)) {
    params += up_projection_params(m);
  }
  if (whole_moe) {
    params += lp.router + lp.shared_experts;
  } else if (moe && has_module(mods, RecomputeModule::SharedExperts)) {
    params += lp.shared_experts;
    if (!recomputed_class(mods, m, moe, KernelClass::SwiGlu)) {  // the shared experts' rows
      const auto shared = static_cast<double>(m.moe.shared_experts);
      ps += static_cast<double>(forward.time(KernelClass::SwiGlu).count_ps()) * shared /
            (shared + static_cast<double>(m.moe.top_k));
    }
  }
  const double gemm_params = forward_gemm_params(m, moe);
  if (gemm_params > 0) {
    ps +=
        static_cast<double>(forward.time(KernelClass::GemmFprop).count_ps()) * params / gemm_params;
  }
  // moe runs the dispatch and combine again: as long as the forward left them exposed.
  return Time::ps(std::llround(ps / std::max(1, gpus))) + (whole_moe ? ep_forward : Time{});
}

namespace {

// What a group whose GPUs draw a speed per kernel adds to a probe's name: kDrawSamples copies
// of its layer in a row.
std::string in_a_row_suffix() {
  return fmt::format(" x{}", kDrawSamples);
}

// Probe `name`'s time: as measured, or (`draws`) the mean of its copies in a row.
Time layer_time(const Measured& m, const std::string& name, bool draws) {
  if (!draws) {
    return m.at(name).outcome.makespan;
  }
  return Time::ps(m.at(name + in_a_row_suffix()).outcome.makespan.count_ps() / kDrawSamples);
}

LayerTiming measure_layer(const TrainingStepJob& job, const ParallelSpec& p, const Measured& m,
                          const ModelSpec& model, bool moe, ComputeTally& sources,
                          const std::string& suffix = "", bool draws = false) {
  LayerTiming t;
  t.moe = moe;
  t.gpus = Mesh(TrainingStepJob::layer_spec(p)).size();
  std::map<std::string, Time> exposed;
  for (const Passes passes : {Passes::Forward, Passes::Backward}) {
    const std::string name = layer_probe_name(moe, passes) + suffix;
    add_pass(m.at(name), passes, t, exposed, sources);
    (passes == Passes::Forward ? t.forward : t.backward) = layer_time(m, name, draws);
  }
  // The forward (full) or its recomputed modules' kernels (selective) run again before the
  // backward.
  t.recomputed = job.recompute.granularity == Recompute::Full
                     ? t.forward
                     : selective_recompute_time(job, model, moe, t.forward_kernels, t.gpus,
                                                t.ep_exposed_forward);
  t.backward += t.recomputed;
  t.backward_input += t.recomputed;
  t.pair = t.forward + t.backward;
  if (moe && measures_pair(job, p)) {
    // The pair as it runs, even where it is slower than its halves one after the other (little
    // communication to hide): the schedule pairs them whatever they cost, as the unfolded step
    // does. Recomputation runs before it (moe_pair_plan).
    t.pair = layer_time(m, std::string(kPairProbe) + suffix, draws) + t.recomputed;
  }
  for (auto& [kind, time] : exposed) {
    if (time > Time{}) {
      t.exposed.emplace_back(kind, time);
    }
  }
  return t;
}

}  // namespace

Time StepMeasurements::dp_time(const DpKey& key) const {
  if (key.empty()) {
    return Time{};
  }
  const auto it = dp.find(key);
  HOPSIM_ASSERT(it != dp.end(), "DP collective {} of {} + {} bytes was not measured",
                op_name(key.op), key.dense, key.expert);
  return it->second;
}

DpKey layer_sync_key(const TrainingStepJob& job, const ModelSpec& m, const ParallelSpec& p,
                     bool moe) {
  const StageParams params = layer_params_per_gpu(m, p, moe);
  return dp_key(sync_op(job), params.dense * job.grad_bytes, params.expert * job.grad_bytes);
}

DpKey layer_gather_key(const ModelSpec& m, const ParallelSpec& p, bool moe) {
  const StageParams params = layer_params_per_gpu(m, p, moe);
  return dp_key(CollectiveOp::AllGather, params.dense * 2, params.expert * 2);
}

DpKey vocab_sync_key(const TrainingStepJob& job, const ModelSpec& m, const ParallelSpec& p) {
  const double params =
      static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / static_cast<double>(p.tp);
  return dp_key(sync_op(job), params * job.grad_bytes, 0);
}

std::vector<DpKey> dp_requests(const TrainingStepJob& job, const BuildEnv& b) {
  const ModelSpec& model = *b.env.model;
  const ParallelSpec& p = b.env.mesh.spec();
  std::set<DpKey> keys;
  for (const bool moe : {false, true}) {
    if (moe ? has_moe(job, model) : has_dense(job, model)) {
      keys.insert(layer_sync_key(job, model, p, moe));
      if (job.zero >= 3) {
        keys.insert(layer_gather_key(model, p, moe));
      }
    }
  }
  keys.insert(vocab_sync_key(job, model, p));
  keys.insert(norm_key());
  const StepShape shape = job.shape(b.env);
  for (int r = 0; r < p.pp; ++r) {
    keys.insert(param_gather_key(job, shape, r));
  }
  std::vector<DpKey> out;
  for (const DpKey& k : keys) {
    if (!k.empty()) {
      out.push_back(k);
    }
  }
  return out;
}

std::string layer_probe_name(bool moe, Passes passes) {
  return fmt::format("{} layer {}", moe ? "moe" : "dense",
                     passes == Passes::Forward ? "fwd" : "bwd");
}

std::string dp_probe_name(const DpKey& key) {
  return fmt::format("dp {} dense {} B expert {} B", op_name(key.op), key.dense, key.expert);
}

bool measures_pair(const TrainingStepJob& job, const ParallelSpec& p) {
  return job.schedule->pairs && p.cp == 1;
}

namespace {

// The slower of `have` and `t`, by forward and backward together; true when `t` is.
bool keep_slower(std::optional<LayerTiming>& have, const LayerTiming& t) {
  if (have && have->forward + have->backward >= t.forward + t.backward) {
    return false;
  }
  have = t;
  return true;
}

// Partial folding: each pipeline rank a perturbation touches takes the slowest of its touched
// layer groups and the healthy one, per layer kind, and its DP collectives as measured on it.
void measure_touched(const TrainingStepJob& job, const BuildEnv& b, const Measured& m,
                     StepMeasurements& out) {
  const Touched t = touched(job, b.env);
  const ModelSpec& model = *b.env.model;
  const ParallelSpec& p = b.env.mesh.spec();
  for (const TouchedGroup& g : t.groups) {
    RankMeasurements& rank = out.ranks[g.stage];
    for (const bool moe : {false, true}) {
      const std::optional<LayerTiming>& healthy = moe ? out.sparse : out.dense;
      if (!healthy) {
        continue;
      }
      std::optional<LayerTiming>& slowest = moe ? rank.sparse : rank.dense;
      if (!slowest && !t.every_gpu[static_cast<std::size_t>(g.stage)]) {
        slowest = healthy;  // its untouched groups run as the healthy one
      }
      ComputeTally ignored;
      const LayerTiming timing = measure_layer(job, p, m, model, moe, ignored, g.probe, g.draws);
      rank.group_time[g.probe][moe ? 1 : 0] = timing.forward + timing.backward;
      if (keep_slower(slowest, timing)) {
        const std::string words = g.suffix();
        rank.paced_by[moe ? 1 : 0] = words.substr(words.find("GPUs"));  // "GPUs 2, 3"
      }
    }
  }
  for (const int stage : t.link_stages) {
    RankMeasurements& rank = out.ranks[stage];
    for (const DpKey& key : dp_requests(job, b)) {
      const ProbeResult* r = m.find(dp_probe_name(key) + stage_suffix(stage));
      rank.dp[key] = r != nullptr ? r->outcome.makespan : Time{};
    }
  }
  for (int r = 0; r < p.pp; ++r) {
    if (t.stage_speed[static_cast<std::size_t>(r)] != speeds_at(1.0)) {
      out.ranks[r].speed = t.stage_speed[static_cast<std::size_t>(r)];
    }
  }
}

}  // namespace

std::string stage_suffix(int stage) {
  return fmt::format(" @ stage {}", stage);
}

StepMeasurements StepMeasurements::at_rank(int rank) const {
  StepMeasurements view = *this;
  view.ranks.clear();
  const auto it = ranks.find(rank);
  if (it == ranks.end()) {
    return view;
  }
  const RankMeasurements& r = it->second;
  view.dense = r.dense ? r.dense : dense;
  view.sparse = r.sparse ? r.sparse : sparse;
  for (const auto& [key, time] : r.dp) {
    view.dp[key] = time;
  }
  view.speed = r.speed;
  return view;
}

StepMeasurements measure_step(const TrainingStepJob& job, const BuildEnv& b, const Measured& m) {
  const ModelSpec& model = *b.env.model;
  const ParallelSpec& p = b.env.mesh.spec();
  StepMeasurements out;
  ComputeTally sources;
  if (has_dense(job, model)) {
    out.dense = measure_layer(job, p, m, *b.env.model, false, sources);
    out.kernels.add(out.dense->kernels, trained_layers(model) - trained_moe_layers(model));
  }
  if (has_moe(job, model)) {
    out.sparse = measure_layer(job, p, m, *b.env.model, true, sources);
    out.kernels.add(out.sparse->kernels, trained_moe_layers(model));
  }
  for (const Source src : kSources) {
    if (sources.time(src) > sources.time(out.source)) {
      out.source = src;
    }
  }
  for (const DpKey& key : dp_requests(job, b)) {
    // Not declared: no DP group has two members (dp 1), so it moves nothing.
    const ProbeResult* r = m.find(dp_probe_name(key));
    out.dp[key] = r != nullptr ? r->outcome.makespan : Time{};
  }
  measure_touched(job, b, m, out);
  return out;
}

namespace {

// `plan` (a layer group's, on its ranks 0 to n-1) `times` times in a row on `gpus`.
Plan in_a_row(const Plan& plan, const std::vector<topo::GpuId>& gpus, int times) {
  const Piece piece = make_piece(plan);
  Plan out;
  const std::uint32_t join = out.phase(PhaseKind::Join, PhasePass::Step);
  PlanTaskId cur = out.add_delay(gpus.front(), Time{}, join);
  for (int k = 0; k < times; ++k) {
    cur = add_piece(out, piece, gpus, cur, join);
  }
  return out;
}

// The clusters partial folding's probes run on: the healthy one (the healthy probes and the
// groups whose compute alone differs by a constant) and, when links are perturbed or GPUs
// draw a speed per kernel, the perturbed one. Each
// is null, the run's, where the run's already is it (the run's keeps only the link
// perturbations, for the pipeline); else built here.
std::pair<std::shared_ptr<const topo::Cluster>, std::shared_ptr<const topo::Cluster>>
probe_clusters(const BuildEnv& b, bool perturbed_too) {
  const std::size_t run_has = b.cluster.spec().perturbations.size();
  std::shared_ptr<const topo::Cluster> healthy;
  if (run_has > 0) {
    topo::Spec spec = b.env.cluster;
    spec.perturbations.clear();
    healthy = std::make_shared<const topo::Cluster>(spec);
  }
  std::shared_ptr<const topo::Cluster> perturbed;
  if (perturbed_too && run_has != b.env.cluster.perturbations.size()) {
    perturbed = std::make_shared<const topo::Cluster>(b.env.cluster);
  }
  return {healthy, perturbed};
}

}  // namespace

namespace {

// Each layer probe a step may declare (a kind's passes, the MoE pair).
std::vector<std::string> layer_probe_names() {
  std::vector<std::string> out{std::string(kPairProbe)};
  for (const bool moe : {false, true}) {
    for (const Passes passes : {Passes::Forward, Passes::Backward}) {
      out.push_back(layer_probe_name(moe, passes));
    }
  }
  return out;
}

// The healthy layer probe `plan` (named `name`) again on touched group `g`: at its place on the
// perturbed cluster at the GPUs' speeds (`speeds`) where its links or per-kernel draws differ
// (the draws also `kDrawSamples` times in a row), else the healthy group's plan slowed to its
// GPUs' speeds, at its place.
void add_group_probe(const TouchedGroup& g, const std::string& name, const Plan& plan,
                     const std::shared_ptr<const topo::Cluster>& healthy,
                     const std::shared_ptr<const topo::Cluster>& perturbed,
                     const ComputeSpeeds& speeds, std::vector<Probe>& more) {
  Probe probe{name + g.probe, Plan{}, nullptr};
  if (g.links || g.draws) {
    probe.plan.append(plan, g.gpus);
    probe.cluster = perturbed;
    probe.speeds = &speeds;
    if (g.draws) {
      more.push_back({name + g.probe + in_a_row_suffix(), in_a_row(plan, g.gpus, kDrawSamples),
                      perturbed, &speeds});
    }
  } else {
    probe.plan = plan;
    probe.plan.slow_compute(g.speed);
    place(probe.plan, g.gpus);
    probe.cluster = healthy;
  }
  more.push_back(std::move(probe));
}

}  // namespace

void add_touched_probes(const TrainingStepJob& job, const BuildEnv& b, std::vector<Probe>& out) {
  if (!job.fold || b.env.cluster.perturbations.empty()) {
    return;
  }
  const Touched t = touched(job, b.env);
  const auto [healthy_cluster, perturbed] = probe_clusters(b, t.on_perturbed());
  for (Probe& p : out) {
    p.cluster = healthy_cluster;
  }
  const auto healthy = [&out](const std::string& name) -> const Plan* {
    const auto it = std::ranges::find(out, name, &Probe::name);
    return it == out.end() ? nullptr : &it->plan;
  };
  std::vector<Probe> more;
  for (const TouchedGroup& g : t.groups) {
    if (!g.own_probe) {
      continue;  // another group with the same speeds measures it
    }
    for (const std::string& name : layer_probe_names()) {
      if (const Plan* plan = healthy(name)) {  // none: no layer of that kind, or no pair
        add_group_probe(g, name, *plan, healthy_cluster, perturbed, b.env.compute_speeds(), more);
      }
    }
  }
  for (const int stage : t.link_stages) {
    for (const DpKey& key : dp_requests(job, b)) {
      Plan plan = dp_plan(job, b, key, stage);
      if (!plan.tasks().empty()) {
        more.push_back({dp_probe_name(key) + stage_suffix(stage), std::move(plan), perturbed,
                        &b.env.compute_speeds()});
      }
    }
  }
  for (Probe& p : more) {
    out.push_back(std::move(p));
  }
}

}  // namespace step_parts

std::vector<Probe> TrainingStepJob::probes(const BuildEnv& b) const {
  if (!fold) {
    return {};
  }
  const ModelSpec& model = *b.env.model;
  const step_parts::LayerGroup group(b);
  std::vector<Probe> out;
  for (const bool moe : {false, true}) {
    if (!(moe ? step_parts::has_moe(*this, model) : step_parts::has_dense(*this, model))) {
      continue;
    }
    for (const Passes passes : {Passes::Forward, Passes::Backward}) {
      out.push_back({step_parts::layer_probe_name(moe, passes),
                     step_parts::layer_plan(*this, b, moe, passes)});
    }
  }
  if (step_parts::has_moe(*this, model) && step_parts::measures_pair(*this, b.env.mesh.spec())) {
    out.push_back(
        {std::string(step_parts::kPairProbe), step_parts::moe_pair_plan(*this, group.build)});
  }
  // The layer probes, built on the layer group's ranks, run where stage 0's first group runs
  // (its CP or EP ranks may sit on other nodes under the mesh's order); partial folding's
  // touched groups take the unmoved plans to their own places.
  const std::size_t layer_probes = out.size();
  for (const step_parts::DpKey& key : step_parts::dp_requests(*this, b)) {
    Plan plan = step_parts::dp_plan(*this, b, key);
    if (!plan.tasks().empty()) {
      out.push_back({step_parts::dp_probe_name(key), std::move(plan)});
    }
  }
  step_parts::add_touched_probes(*this, b, out);
  const std::vector<topo::GpuId> first = step_parts::group_gpus(b.env.mesh, 0, 0);
  for (std::size_t i = 0; i < layer_probes; ++i) {
    step_parts::place(out[i].plan, first);
  }
  return out;
}

}  // namespace hopsim::work
