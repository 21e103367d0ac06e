// The `chakra` workload: replays a Chakra execution trace (one file per rank) on the cluster.
// Compute nodes run on their rank's GPU for their recorded time (or the roofline's, from their
// FLOPs and bytes); collective nodes become hopsim collectives over the process group they
// name; send/recv pairs become flows; every dependency is kept.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/collectives/algorithms.hpp"
#include "workloads/env/job_env.hpp"
#include "workloads/trace/et_trace.hpp"

namespace hopsim::work {

/// Where a compute node's time comes from: its duration_micros, or the roofline of its num_ops
/// (FLOPs, BF16) and tensor_size (bytes through HBM) on the cluster's GPU.
enum class TraceCompute : std::uint8_t { Recorded, Model };
inline constexpr std::array<std::string_view, 2> kTraceComputeNames{"recorded", "model"};

struct ChakraJob {
  static constexpr std::string_view kKind = "chakra";
  static constexpr bool kSimulated = true;

  std::shared_ptr<const EtTrace> trace;  ///< read and checked file by file by tools/chakra
  std::string source;                    ///< where the trace came from (for reports)
  /// The GPU of each trace rank; empty: rank r runs on GPU r.
  std::vector<int> gpus;
  /// A collective's ranks by its pg_name (trace ranks, in ring order); a collective without
  /// pg_name runs over every rank of the trace.
  std::map<std::string, std::vector<int>> groups;
  TraceCompute compute = TraceCompute::Recorded;
  /// The algorithm of each collective op (indexed by CollectiveOp); unset: algorithm_for's.
  std::array<std::optional<CollectiveAlgorithm>, kCollectiveOps.size()> algorithms{};

  /// Ranks on GPUs of the cluster, distinct; groups of trace ranks; every collective matched
  /// across its group (same op and size, in the same order on every rank), every send matched
  /// to a recv, no dependency cycle (across ranks too), a simulated time that fits.
  void check(const JobEnv& env, Problems& out) const;
  /// One case: the whole trace.
  std::vector<Case> cases(const BuildEnv& env) const;
  /// Bytes its plan takes to build and simulate: a task per compute node and send
  /// (kBytesPerPlanTask), its collectives' flows (kBytesPerPlanFlow).
  double estimated_plan_bytes(const JobEnv& env) const;
  /// The algorithm `op` runs with: the experiment's, else NCCL's tuner for all-reduce,
  /// all-gather and reduce-scatter and flat for all-to-all (as NCCL runs it).
  CollectiveAlgorithm algorithm_for(CollectiveOp op) const;
  /// The GPU trace rank r runs on.
  topo::GpuId gpu_of(int rank) const {
    return topo::GpuId{gpus.empty() ? rank : gpus[static_cast<std::size_t>(rank)]};
  }
};

/// A trace kernel's time on the roofline: its launch, then `flops` at the BF16 peak times the
/// GEMM efficiency or `bytes` at HBM bandwidth times the memory efficiency, whichever is
/// longer (the shapes a table needs are not in a trace).
Time roofline_time(const Roofline& roofline, double flops, std::int64_t bytes);

}  // namespace hopsim::work
