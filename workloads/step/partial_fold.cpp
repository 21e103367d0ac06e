// Partial folding (partial_fold.hpp): which layer groups and stages perturbations touch.
#include "workloads/step/partial_fold.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "topology/leaves.hpp"
#include "workloads/step/training_step_parts.hpp"

namespace hopsim::work::step_parts {
namespace {

std::size_t at(std::int64_t i) {
  return static_cast<std::size_t>(i);
}

// Layer groups by (stage, block), each filled in as perturbations touch it.
class GroupMap {
 public:
  explicit GroupMap(const JobEnv& env)
      : env_(env), layer_(TrainingStepJob::layer_spec(env.mesh.spec())) {}

  TouchedGroup& of(topo::GpuId gpu) {
    const Mesh& mesh = env_.mesh;
    const auto stage = static_cast<int>(mesh.coordinate(gpu.value(), Dim::Pp));
    const std::int64_t block = mesh.coordinate(gpu.value(), Dim::Dp) / layer_.spec().dp;
    auto [it, fresh] = groups_.try_emplace({stage, block});
    TouchedGroup& g = it->second;
    if (fresh) {
      g.stage = stage;
      g.block = block;
      g.gpus = gpus_of(stage, block);
      g.speed.assign(g.gpus.size(), speeds_at(1.0));
    }
    return g;
  }

  std::vector<topo::GpuId> gpus_of(int stage, std::int64_t block) const {
    return group_gpus(env_.mesh, stage, block);
  }

  /// DP blocks per pipeline rank.
  std::int64_t blocks() const { return env_.mesh.spec().dp / layer_.spec().dp; }

  std::vector<TouchedGroup> take() {
    std::vector<TouchedGroup> out;
    for (auto& [key, g] : groups_) {
      out.push_back(std::move(g));
    }
    return out;
  }

 private:
  const JobEnv& env_;
  Mesh layer_;
  std::map<std::pair<int, std::int64_t>, TouchedGroup> groups_;
};

}  // namespace

std::vector<topo::GpuId> group_gpus(const Mesh& mesh, int stage, std::int64_t block) {
  const Mesh layer(TrainingStepJob::layer_spec(mesh.spec()));
  std::vector<topo::GpuId> out;
  for (int i = 0; i < layer.size(); ++i) {
    out.emplace_back(mesh.rank_of(layer.coordinate(i, Dim::Tp), layer.coordinate(i, Dim::Cp), stage,
                                  block * layer.spec().dp + layer.coordinate(i, Dim::Dp)));
  }
  return out;
}

void place(Plan& plan, const std::vector<topo::GpuId>& at) {
  bool identity = true;
  for (std::size_t i = 0; i < at.size(); ++i) {
    identity = identity && at[i].index() == i;
  }
  if (identity) {
    return;
  }
  Plan moved;
  moved.append(plan, at);
  plan = std::move(moved);
}

std::string TouchedGroup::suffix() const {
  std::vector<int> ranks;
  for (const topo::GpuId g : gpus) {
    ranks.push_back(g.value());
  }
  const std::size_t shown = std::min<std::size_t>(ranks.size(), 8);
  return fmt::format(
      " @ stage {} GPUs {}{}", stage,
      fmt::join(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
      ranks.size() > shown ? fmt::format(", ... ({} in all)", ranks.size()) : "");
}

namespace {

// The leaf a flow from GPU `a` to GPU `b` on another node enters the fabric at: a's own NIC's,
// or with PXN (cross-rail over NVLink) the NIC on b's rail of a's node.
int entry_leaf(const topo::Spec& spec, int a, int b) {
  const int per_node = spec.gpus_per_node;
  const int via = spec.cross_rail == topo::CrossRail::NvLink ? a - a % per_node + b % per_node : a;
  return topo::leaf_of_nic(spec, via);
}

// Whether some flow between two GPUs of `gpus` crosses the spine links that `p` changes: it
// leaves one leaf for another, either of them among p's leaves (any leaf when p names spines
// only). Flows inside a node cross NVLink, unless they go `nics_only` (DeepEP's low-latency
// kernels), which also leave from their own NIC.
bool crosses(const topo::Spec& spec, const std::vector<topo::GpuId>& gpus,
             const topo::Perturbation& p, bool nics_only) {
  const int per_node = spec.gpus_per_node;
  for (const topo::GpuId a : gpus) {
    for (const topo::GpuId b : gpus) {
      if (a == b || (!nics_only && a.value() / per_node == b.value() / per_node)) {
        continue;
      }
      const int from =
          nics_only ? topo::leaf_of_nic(spec, a.value()) : entry_leaf(spec, a.value(), b.value());
      const int to = topo::leaf_of_nic(spec, b.value());
      if (from != to && (p.leaves.empty() || std::ranges::find(p.leaves, from) != p.leaves.end() ||
                         std::ranges::find(p.leaves, to) != p.leaves.end())) {
        return true;
      }
    }
  }
  return false;
}

// Spine links: every stage's DP collectives are measured on the perturbed cluster (each
// replica's ring may cross them), and the layer groups whose own traffic crosses them.
void spine_touched(const JobEnv& env, bool nics_only, GroupMap& groups,
                   std::vector<bool>& link_stage) {
  for (const topo::Perturbation& p : env.cluster.perturbations) {
    if (p.part != topo::PerturbedPart::Spine) {
      continue;
    }
    std::fill(link_stage.begin(), link_stage.end(), true);
    for (int stage = 0; stage < static_cast<int>(link_stage.size()); ++stage) {
      for (std::int64_t block = 0; block < groups.blocks(); ++block) {
        const std::vector<topo::GpuId> gpus = groups.gpus_of(stage, block);
        if (crosses(env.cluster, gpus, p, nics_only)) {
          groups.of(gpus.front()).links = true;
        }
      }
    }
  }
}

// Groups of the same speeds (compute only), drawn or not alike, share the first one's probes.
void share_probes(std::vector<TouchedGroup>& groups) {
  // (draws, speeds) -> the probe's suffix
  std::map<std::pair<bool, std::vector<KernelSpeeds>>, std::string> measured;
  for (TouchedGroup& g : groups) {
    g.probe = g.suffix();
    if (!g.links) {
      const auto [it, fresh] = measured.try_emplace({g.draws, g.speed}, g.probe);
      g.probe = it->second;
      g.own_probe = fresh;
    }
  }
}

// The groups whose GPUs compute perturbed (slow, drawing per kernel, another GPU model), each
// GPU at its speeds (ComputeSpeeds); each stage's slowest GPU per kernel class, and whether every
// GPU of it is perturbed.
void compute_touched(const JobEnv& env, GroupMap& groups, Touched& out) {
  const Mesh& mesh = env.mesh;
  const auto stages = at(mesh.spec().pp);
  const ComputeSpeeds& speeds = env.compute_speeds();
  std::vector<topo::GpuId> computing;
  for (const topo::GpuId gpu : speeds.perturbed()) {
    if (gpu.value() < mesh.size()) {
      computing.push_back(gpu);
    }
  }
  std::vector<int> perturbed(stages, 0);
  for (const topo::GpuId gpu : computing) {
    ++perturbed[at(mesh.coordinate(gpu.value(), Dim::Pp))];
  }
  for (std::size_t r = 0; r < stages; ++r) {
    out.every_gpu.push_back(perturbed[r] == mesh.size() / static_cast<int>(stages));
    // A stage's slowest GPU: an untouched one at 1, unless every GPU is perturbed.
    out.stage_speed.push_back(speeds_at(out.every_gpu.back() ? 1e9 : 1.0));
  }
  for (const topo::GpuId gpu : computing) {
    TouchedGroup& g = groups.of(gpu);
    const auto i =
        static_cast<std::size_t>(std::find(g.gpus.begin(), g.gpus.end(), gpu) - g.gpus.begin());
    // A speed drawn per kernel counts at its mean (the stage's optimizer); the group is
    // measured with the draws.
    const KernelSpeeds s = speeds.speeds(gpu);
    g.speed[i] = s;
    g.draws = g.draws || speeds.draws(gpu);
    KernelSpeeds& slowest = out.stage_speed[at(g.stage)];
    for (std::size_t k = 0; k < kKernelClasses; ++k) {
      slowest[k] = std::min(slowest[k], s[k]);
    }
  }
}

}  // namespace

Touched touched(const TrainingStepJob& job, const JobEnv& env) {
  Touched out;
  const Mesh& mesh = env.mesh;
  const auto stages = at(mesh.spec().pp);
  GroupMap groups(env);
  std::vector<bool> link_stage(stages, false);
  for (const topo::Perturbation& p : env.cluster.perturbations) {
    if (p.part != topo::PerturbedPart::Nic && p.part != topo::PerturbedPart::NvLink) {
      continue;
    }
    for (const int gpu : p.gpus) {
      // Its node's GPUs reach the fabric through its NIC (PXN, carriers) or NVLink.
      const int first = gpu - gpu % env.cluster.gpus_per_node;
      for (int h = first; h < first + env.cluster.gpus_per_node && h < mesh.size(); ++h) {
        TouchedGroup& g = groups.of(topo::GpuId{h});
        g.links = true;
        link_stage[at(g.stage)] = true;
      }
    }
  }
  const bool nics_only = env.model != nullptr && has_moe(job, *env.model) &&
                         ep_algorithm_row(job.layer.moe->algorithm).through_nics;
  spine_touched(env, nics_only, groups, link_stage);
  compute_touched(env, groups, out);
  out.groups = groups.take();
  share_probes(out.groups);
  for (std::size_t s = 0; s < stages; ++s) {
    if (link_stage[s]) {
      out.link_stages.push_back(static_cast<int>(s));
    }
  }
  return out;
}

bool Touched::on_perturbed() const {
  return std::ranges::any_of(groups, [](const TouchedGroup& g) { return g.links || g.draws; });
}

int link_column(const JobEnv& env) {
  int first = env.mesh.size();
  for (const topo::Perturbation& p : env.cluster.perturbations) {
    if (p.part == topo::PerturbedPart::Nic || p.part == topo::PerturbedPart::NvLink) {
      for (const int g : p.gpus) {
        first = std::min(first, g);
      }
    }
  }
  return first < env.mesh.size() ? first : 0;
}

std::vector<int> pipeline_columns(const TrainingStepJob& job, const JobEnv& env) {
  const Mesh& mesh = env.mesh;
  const int first = static_cast<int>(mesh.group(Dim::Pp, link_column(env)).front().value());
  std::vector<int> out{first};
  if (!job.fold || mesh.spec().pp < 2) {
    return out;
  }
  for (const topo::Perturbation& p : env.cluster.perturbations) {
    if (p.part != topo::PerturbedPart::Spine) {
      continue;
    }
    for (int anchor = 0; anchor < mesh.size(); ++anchor) {
      if (mesh.coordinate(anchor, Dim::Pp) != 0 || std::ranges::find(out, anchor) != out.end()) {
        continue;
      }
      const std::vector<topo::GpuId> column = mesh.group(Dim::Pp, anchor);
      for (std::size_t s = 0; s + 1 < column.size(); ++s) {
        if (crosses(env.cluster, {column[s], column[s + 1]}, p, false)) {
          out.push_back(anchor);
          break;
        }
      }
    }
  }
  std::sort(out.begin() + 1, out.end());
  return out;
}

using topo::on_links;

topo::Spec pipeline_cluster(const topo::Spec& spec) {
  topo::Spec out = spec;
  std::erase_if(out.perturbations, [](const topo::Perturbation& p) { return !on_links(p); });
  return out;
}

void check_partial_fold(const TrainingStepJob& job, const JobEnv& env, Problems& out) {
  const auto& list = env.cluster.perturbations;
  if (!job.fold || list.empty()) {
    return;
  }
  const std::string unfold = "; unfold it (\"fold\": false in the workload, or --no-fold)";
  if (std::ranges::any_of(list, on_links) && job.zero >= 3) {
    out.push_back({"/perturbations",
                   "a folded ZeRO-3 step cannot place link perturbations: its per-layer "
                   "parameter gathers and gradient reductions run on every stage at once and "
                   "share the perturbed NICs across stages and with the layers' own traffic, "
                   "which folding measures apart; unfold it (\"fold\": false in the workload, "
                   "or --no-fold), or use ZeRO-1"});
    return;
  }
  const std::size_t columns = pipeline_columns(job, env).size();
  if (columns > kMaxColumns) {
    out.push_back({"/perturbations",
                   fmt::format("the perturbed spine links carry the activations of {} pipeline "
                               "columns; a folded step runs a pipeline for each and takes at "
                               "most {}{}",
                               columns, kMaxColumns, unfold)});
    return;
  }
  const Touched t = touched(job, env);
  const auto probes = std::ranges::count(t.groups, true, &TouchedGroup::own_probe);
  if (probes > static_cast<std::ptrdiff_t>(kMaxTouchedGroups)) {
    out.push_back({"/perturbations",
                   fmt::format("the perturbations touch {} layer groups that run differently; a "
                               "folded step simulates each on its own and takes at most {}{}",
                               probes, kMaxTouchedGroups, unfold)});
  }
}

}  // namespace hopsim::work::step_parts
