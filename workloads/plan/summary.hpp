// Per-rank and per-phase accounting of a run: busy, compute and communication time, bytes.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "topology/cluster.hpp"
#include "workloads/compute/source.hpp"
#include "workloads/plan/plan.hpp"
#include "workloads/plan/runner.hpp"

namespace hopsim::work {

struct RankTime {
  Time busy;     ///< union of its compute and communication intervals
  Time compute;  ///< union of its compute intervals
  Time comm;     ///< union of the intervals of flows it sends or receives
  Time exposed;  ///< communication not hidden under its compute: busy - compute
};

struct PhaseTime {
  Time start = Time::max();
  Time end;
  Time compute;  ///< of the critical rank, within the phase
  Time comm;
  Time exposed;
};

struct Summary {
  Time step;
  std::vector<RankTime> ranks;  ///< every GPU of the cluster
  std::size_t involved = 0;     ///< GPUs that appear in the plan
  topo::GpuId critical_rank;    ///< the busiest rank (the lowest index among equals)
  std::string critical_gpu;     ///< its GPU model, on a mixed cluster only
  double mean_busy_s = 0;
  /// Bytes of flows that cross an NVLink hop, and an InfiniBand (NIC) hop. A folded step's
  /// count the whole cluster (run() puts the case's own count, CaseTraffic, in their place).
  Bytes nvlink_bytes;
  Bytes ib_bytes;
  /// Around failed links (the cluster has some): flows whose route differs from the healthy
  /// cluster's, and their bytes.
  bool failed_links = false;
  std::int64_t rerouted_flows = 0;
  Bytes rerouted_bytes;
  Flops flops;         ///< of every compute task that ran
  ComputeTally compute_sources;  ///< compute time per source, over every GPU
  KernelTally compute_kernels;   ///< compute time per kernel class, over every GPU
  std::vector<PhaseTime> phases;
};

Summary summarize(const topo::Cluster& cluster, const Plan& plan, const Outcome& outcome);

/// `s` (summarize's of `plan` and `outcome`) with `rank` as its critical rank: the phases as
/// that rank saw them.
Summary at_rank(Summary s, const Plan& plan, const Outcome& outcome, topo::GpuId rank);

/// Identical units in a row (a MoE layer's layers), summarized after n, n + 1 and n + 2 of them:
/// whether the last added exactly what the one before did to the step and to every rank's busy,
/// compute and communication time and to every phase (a steady schedule).
bool steady(const Summary& one, const Summary& two, const Summary& three);

/// A steady run's summary after `extra` more units: `more` plus `extra` times what its last unit
/// added over `fewer` (one unit fewer), figure by figure, phase starts too; the busiest rank
/// chosen again.
Summary extrapolate(const Summary& fewer, const Summary& more, std::int64_t extra);

/// The busiest rank of extrapolate(fewer, more, extra), as summarize() picks it (the lowest
/// index among the busiest ranks with work), without extrapolating the rest.
topo::GpuId busiest_after(const Summary& fewer, const Summary& more, std::int64_t extra);

/// Which kinds of link a route crosses: an NVLink hop, a network (NIC or fabric) hop; the
/// byte totals above count a flow under each kind it crosses.
struct RouteKinds {
  bool nvlink = false;
  bool ib = false;
};
RouteKinds route_kinds(const topo::Cluster& cluster, std::span<const topo::LinkId> route);

}  // namespace hopsim::work
