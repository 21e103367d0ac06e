// Partial folding: a folded step with perturbations measures, besides its healthy layer group,
// every layer group a perturbation touches, and assembles each pipeline rank from the slowest
// of its groups (docs/what-ifs.md#a-perturbed-step-folded).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/env/job_env.hpp"
#include "workloads/step/training_step_job.hpp"

namespace hopsim::work::step_parts {

/// A layer group a perturbation touches: on pipeline rank `stage`, block `block` of the DP
/// coordinate (lcm(tp x cp, ep) / (tp x cp) DP ranks per block), its GPUs in layer-group rank
/// order.
struct TouchedGroup {
  int stage = 0;
  std::int64_t block = 0;
  std::vector<topo::GpuId> gpus;
  /// A link perturbation touches it (one of its GPUs shares a node with a perturbed NIC or
  /// NVLink, or its own traffic crosses changed spine links): measured at its place on the
  /// perturbed cluster. Otherwise only compute differs
  /// (slow GPUs, another GPU model): the healthy group's plan with its kernels at `speed` (per
  /// layer-group rank, its GPU's ComputeSpeeds::speeds).
  bool links = false;
  /// One of its GPUs draws a speed per kernel (kernel_speed): measured at its place on the
  /// perturbed cluster at the run's speeds, whose runner draws them, as the mean of
  /// kDrawSamples layers in a row, since each of its syncs waits for the slowest draw (the
  /// healthy plan slowed by each GPU's mean speed misses that).
  bool draws = false;
  std::vector<KernelSpeeds> speed;
  /// " @ stage 1 GPUs 2, 3": what its probes' names add to the healthy probes'.
  std::string suffix() const;
  /// The suffix of the probes that measure it: its own, or (compute only) that of the first
  /// group with the same speeds, which measures it too (a mixed cluster's nodes of one model).
  std::string probe;
  bool own_probe = true;
};

/// The GPUs of the layer group on pipeline rank `stage`, DP block `block` of `mesh` (a
/// step's), in layer-group rank order: where that group's layers run. Under the default order
/// (tp, cp, pp, dp) stage 0's block 0 is GPUs 0 to n-1.
std::vector<topo::GpuId> group_gpus(const Mesh& mesh, int stage, std::int64_t block);

/// Moves `plan`, built on a layer group's ranks 0 to n-1, to the GPUs `at` (group_gpus);
/// leaves it as it is when they are 0 to n-1 already.
void place(Plan& plan, const std::vector<topo::GpuId>& at);

/// What a folded step's perturbations touch.
struct Touched {
  std::vector<TouchedGroup> groups;  ///< by stage, then block
  /// Pipeline ranks whose DP groups a link perturbation touches (with spine links, every
  /// rank): their DP collectives are measured on them, on the perturbed cluster.
  std::vector<int> link_stages;
  /// Per pipeline rank and kernel class, its slowest GPU's speed (its output layer's and its
  /// optimizer's pace).
  std::vector<KernelSpeeds> stage_speed;
  /// Per pipeline rank: every GPU of it computes perturbed (a stage of another GPU model), so
  /// no healthy layer group is left to pace it.
  std::vector<bool> every_gpu;
  /// Whether some group is measured on the perturbed cluster (links or draws).
  bool on_perturbed() const;
};

/// Layers in a row a group whose GPUs draw per kernel is measured over: one layer's draws
/// leave its time a few percent off their mean, sixteen within about 1%.
inline constexpr int kDrawSamples = 16;

/// More layer-group probes than this are refused: each is simulated on its own.
inline constexpr std::size_t kMaxTouchedGroups = 256;

/// The groups and stages the perturbations of env.cluster touch in `job`; none without
/// perturbations.
Touched touched(const TrainingStepJob& job, const JobEnv& env);

/// The first GPU of the mesh whose NIC or NVLink a perturbation changes, 0 when none: the
/// folded pipeline runs on its column (its tp, cp and dp coordinates), so that its activations
/// cross the perturbed links.
int link_column(const JobEnv& env);

/// More pipeline columns than this (anchored on spine links) are refused: each runs its own
/// pipeline.
inline constexpr std::size_t kMaxColumns = 64;

/// The pipeline columns a folded step simulates, each as its stage-0 GPU: link_column's first;
/// then, under spine perturbations, every other column whose activations between two
/// consecutive stages cross changed spine links (they share them at once), ascending.
std::vector<int> pipeline_columns(const TrainingStepJob& job, const JobEnv& env);

/// The cluster a folded step's pipeline runs on, which run() simulates without the GPUs' speeds:
/// `spec` with its link perturbations alone, every GPU the cluster's model (the layers measured
/// on perturbed GPUs carry their speeds, read from the same ComputeSpeeds the unfolded step's
/// runner reads).
topo::Spec pipeline_cluster(const topo::Spec& spec);

/// What partial folding cannot take: link perturbations under ZeRO-3, more than kMaxColumns
/// pipeline columns, more than kMaxTouchedGroups groups. Each names /perturbations.
void check_partial_fold(const TrainingStepJob& job, const JobEnv& env, Problems& out);

}  // namespace hopsim::work::step_parts
