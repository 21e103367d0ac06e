// An experiment as plain data: the cluster, the model, the parallel mesh, the compute
// calibration and one job; and the checks that everything fits together.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/problem.hpp"
#include "topology/spec.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/collectives/ep_exchange.hpp"
#include "workloads/compute/calibration.hpp"
#include "workloads/compute/compute_model.hpp"
#include "workloads/compute/gpu_type_speed.hpp"
#include "workloads/env/job_env.hpp"
#include "workloads/experiment/job.hpp"
#include "workloads/mesh/mesh.hpp"
#include "workloads/model/model.hpp"

namespace hopsim::work {

/// A published figure to compare a collective run with.
struct Validation {
  std::string metric;  ///< a collective row's "busbw_GBps", "time_s", ...; a layer's "time_s"
  std::optional<Bytes> bytes;  ///< collectives: the size (row) it applies to
  double published = 0;
  std::string source;
};

struct Experiment {
  std::string name;
  topo::Spec cluster;  ///< the fabric and its GPU model
  NcclModel nccl;  ///< NCCL's constants for collectives
  LibraryConstants ep_libraries;  ///< what the EP libraries' kernels reach on this cluster
  std::optional<ModelSpec> model;
  ParallelSpec parallel;
  /// Kernel times for the compute model; null: the roofline answers alone. Shared, so that
  /// the many copies of a sweep do not copy tables.
  std::shared_ptr<const Calibration> calibration;
  std::string calibration_name;  ///< where the table came from, for reports
  /// Set when the table was made on another GPU: its figures, to scale its times by.
  std::optional<TableScaling> calibration_scaling;
  /// How "calibration": "auto" chose (empty when the experiment named its table).
  std::string calibration_note;
  /// The cluster's GpuType perturbations priced by their own calibration against its GPU,
  /// when the experiment is read (gpu_types.hpp); one without an entry runs at the roofline
  /// ratio.
  std::vector<PricedGpuType> gpu_types;
  Job job;
  /// The attention kernel the workload runs (its `attention_kernel`).
  AttentionKernel attention_kernel = AttentionKernel::Auto;
  /// How FP8 GEMM operands are cast (its `fp8_recipe`).
  Fp8Recipe fp8_recipe = Fp8Recipe::CastTranspose;
  std::uint64_t seed = 1;
  std::optional<Validation> validation;
  /// The flow solver's approximate mode (sim::FlowNetwork::set_tolerance); 0: exact.
  double solver_tolerance = 0;
};

/// The GPUs a layer or step kind runs on: its mesh's, the cluster's first (mesh rank r on GPU
/// r); 0 for the kinds that name their GPUs (flows, collective, chakra). The parallel degrees
/// must have passed check.
int mesh_gpus(const Experiment& experiment);

/// What a job of `experiment` builds on, over `mesh` (its own), its GPUs at `speeds` (null: at
/// the compute model's rate). Runs, checks and closed forms all take their environment here,
/// so that none leaves a field out (the recipe that sizes a step's weight copies, say).
JobEnv job_env(const Experiment& experiment, const Mesh& mesh,
               const ComputeSpeeds* speeds = nullptr);

/// Every problem of the experiment, as JSON pointers into its document ("/cluster/nodes",
/// "/parallel/tp", "/workload/seq_len"); empty when it can run (or be explained).
Problems check(const Experiment& experiment);

/// The compute model of the experiment's GPU: its calibration table, then a roofline of its
/// peaks. The experiment must outlive it.
ComputeModel compute_model(const Experiment& experiment);

/// The roofline of `gpu`: its peaks, HBM bandwidth, SMs and achieved-over-peak efficiencies.
Roofline roofline_of(const topo::GpuSpec& gpu);

}  // namespace hopsim::work
