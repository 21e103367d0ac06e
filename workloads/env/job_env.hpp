// What a job sees of its experiment: to check itself, and to build the plans it simulates.
#pragma once

#include <any>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topology/cluster.hpp"
#include "topology/spec.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/collectives/ep_exchange.hpp"
#include "workloads/compute/compute_model.hpp"
#include "workloads/compute/compute_speeds.hpp"
#include "workloads/mesh/mesh.hpp"
#include "workloads/model/model.hpp"
#include "workloads/plan/plan.hpp"
#include "workloads/plan/summary.hpp"

namespace hopsim::work {

/// A job checks itself against these; every part has passed its own checks.
struct JobEnv {
  const topo::Spec& cluster;
  const NcclModel& nccl;
  const Mesh& mesh;
  const ModelSpec* model = nullptr;  ///< null when the experiment names none
  std::uint64_t seed = 1;
  /// The EP libraries' constants (the experiment's); null: each library's defaults.
  const LibraryConstants* libraries = nullptr;
  /// What the EP exchanges read: `libraries`, or the defaults.
  const LibraryConstants& ep_libraries() const {
    static const LibraryConstants kDefaults{};
    return libraries != nullptr ? *libraries : kDefaults;
  }

  /// The speeds the GPUs compute at, built once per run from `cluster`'s perturbations and the
  /// experiment's priced GPU types; null: every GPU at the compute model's rate.
  const ComputeSpeeds* speeds = nullptr;

  /// `speeds`, or every GPU at the compute model's rate.
  const ComputeSpeeds& compute_speeds() const {
    static const ComputeSpeeds kFull{};
    return speeds != nullptr ? *speeds : kFull;
  }

  /// How the experiment casts its low-precision GEMMs' operands (the weight copies a step holds
  /// follow it).
  Fp8Recipe fp8_recipe = Fp8Recipe::CastTranspose;
};

class RoutingCache;  // workloads/ep/routing_cache.hpp

/// A job builds its plans from these.
struct BuildEnv {
  const JobEnv& env;
  const topo::Cluster& cluster;
  const ComputeModel* compute = nullptr;  ///< null when the job needs none
  /// The run's MoE routings, which the plans it builds share; null: each plan routes its own.
  RoutingCache* routings = nullptr;
};

/// What a case's run is worth to the user who pays for its GPUs: the GPUs it occupies, the
/// tokens it processes and their model FLOPs (the Llama 3 / DeepSeek-V3 convention: GEMMs and
/// attention scores, forward and backward as the case passes, no recomputation), and one
/// GPU's peak dense BF16 TFLOPs (MFU's denominator). Steps and layer kinds have one;
/// collectives and flows do not.
struct Throughput {
  std::int64_t gpus = 0;
  double tokens = 0;
  double model_flops = 0;
  double peak_tflops = 0;
};

/// Bytes a case counts itself rather than from its plan's flows. A folded step simulates one
/// GPU per pipeline stage and measures its layer groups and gradient syncs in probes, so it
/// counts the whole cluster's traffic (its probes' bytes as often as the step runs them, its
/// pipeline's activations once per column of the mesh), as the unfolded step's plan moves it.
struct CaseTraffic {
  bool counted = false;  ///< the bytes below replace those of the plan's flows
  Bytes nvlink{};
  Bytes ib{};
};

/// A case whose plan holds `simulated` of `total` identical units in a row (a MoE layer's
/// layers) whose schedule is steady (plan/summary.hpp): run() extrapolates its summary by what
/// its last unit added over `fewer`, the same plan with one unit fewer, as simulated, both seen
/// from `critical_rank` (the whole run's busiest GPU, which the shorter runs need not share).
struct Repeat {
  std::int64_t total = 0;
  std::int64_t simulated = 0;
  Summary fewer;
  topo::GpuId critical_rank;
};

/// One simulated case of a job: for a collective, one size.
struct Case {
  std::string name;
  Plan plan;
  std::string choice{};  ///< what the job chose for it, e.g. "tree/simple"; may be empty
  /// Figures of the case's own input that reports divide by its time (name, value).
  std::vector<std::pair<std::string, double>> metrics{};
  /// What the kind's report section needs beyond the plan and its times, of the kind's own
  /// type (an attention layer's CpDetails, a step's StepDetails; none for flows and
  /// collectives), read back by that kind's accessor (cp_details, ep_details in
  /// workloads/layer/case_details.hpp; step_details in workloads/step/step_details.hpp).
  std::any details{};
  std::optional<Throughput> throughput{};
  CaseTraffic traffic{};
  /// A folded step's compute by kernel class, from its probes (its plan holds layers as
  /// measured times, of no class); empty: the plan's own.
  std::optional<KernelTally> kernels{};
  std::optional<Repeat> repeat{};
};

}  // namespace hopsim::work
