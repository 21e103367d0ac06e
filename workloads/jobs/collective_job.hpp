// The `collective` workload: one collective over a list of sizes, nccl-tests style, over a
// list of ranks or over every group of one mesh dimension at once.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "topology/cluster.hpp"
#include "workloads/collectives/algorithms.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/ep/moe_routing.hpp"
#include "workloads/env/job_env.hpp"
#include "workloads/mesh/mesh.hpp"

namespace hopsim::work {

/// `chunk_tokens` of a chunked all-to-all when the job names none: its library's for the EP size
/// (the row's chunk_tokens, workloads/collectives/ep_algorithms.hpp).
inline constexpr std::int64_t kDeepEpChunks = -1;

/// What a collective's flow takes, measured (peak RSS, /usr/bin/time) on a flat all-to-all of
/// 1,000 ranks: 1.11 GB for one size (1M flows), 1.69 GB for three sizes.
inline constexpr double kPlanBytesPerFlow = 300;
inline constexpr double kSimulatedBytesPerFlow = 850;

struct CollectiveJob {
  static constexpr std::string_view kKind = "collective";
  static constexpr bool kSimulated = true;

  CollectiveOp op = CollectiveOp::AllGather;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  /// In ring order; send_recv takes exactly two. Empty: every GPU, or `group`'s groups.
  std::vector<int> ranks;
  /// Run in every group of this mesh dimension at once (the CP rings, the TP groups, ...).
  std::optional<Dim> group;
  std::vector<Bytes> sizes;  ///< nccl-tests "size": bytes per rank (all-gather: output)
  /// Pipelined pieces: ring pieces per step, tree pieces per channel and tree, two-tier pieces
  /// per InfiniBand transfer (without moe). 0: automatic (ring 1, tree pieces of 512 KiB,
  /// two-tier 1).
  int chunks = 0;
  /// Rings in parallel; 0: one per GPU of a node (rail-aligned) when the ranks span nodes, one
  /// otherwise.
  int channels = 0;
  /// NCCL protocol; unset: the cluster's (`nccl.protocol`).
  std::optional<Protocol> protocol;
  /// Pick the protocol as NCCL's tuner would, per size.
  bool auto_protocol = false;
  /// all_to_all two_tier: the reverse exchange (DeepEP's combine).
  bool combine = false;
  /// Rings as one flow per rank (RingOptions::streamed): a training step's gradient sync.
  bool streamed_rings = false;
  /// all_to_all two_tier with moe: tokens per InfiniBand piece; kDeepEpChunks: DeepEP's; 0:
  /// one piece (store and forward).
  std::int64_t chunk_tokens = kDeepEpChunks;
  /// all_to_all two_tier: how pieces become flows; unset: each piece its own (DeepEP's
  /// kernels, what the validation rows measure).
  std::optional<Pieces> pieces;
  /// all_to_all: SMs the EP library's kernels hold; 0: the library's own count.
  std::int64_t comm_sms = 0;
  /// all_to_all only: route MoE tokens instead of a uniform matrix (sizes then hold one size,
  /// tokens_per_gpu x token_bytes).
  std::optional<MoeRouting> moe;
  Bytes token_bytes;  ///< with moe: bytes of one token on the wire

  /// Ranks in the cluster and distinct, at least 2 per set; the algorithm implements the op;
  /// chunks only for rings; a bound on flows per collective; the MoE routing fits the ranks.
  void check(const JobEnv& env, Problems& out) const;
  /// One case per size.
  std::vector<Case> cases(const BuildEnv& env) const;
  /// Bytes its cases take, all plans built before the first is simulated: per flow of a case
  /// kPlanBytesPerFlow held per size, and kSimulatedBytesPerFlow more while one simulates.
  double estimated_plan_bytes(const JobEnv& env) const;
  /// The rank sets the collective runs over: `ranks`, every GPU, or the mesh's groups.
  std::vector<std::vector<topo::GpuId>> rank_sets(const topo::Spec& cluster,
                                                  const Mesh& mesh) const;
};

/// nccl-tests' busbw / algbw: 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
/// reduce-scatter and all-to-all, 1 for send/recv.
double busbw_factor(CollectiveOp op, int n);


/// The algorithm and protocol one size runs with: the job's, or NCCL's tuner's pick.
struct CollectiveChoice {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  Protocol protocol = Protocol::Simple;
};

CollectiveChoice choose(const CollectiveJob& job, const JobEnv& env,
                        std::span<const topo::GpuId> ranks, Bytes size);

/// Flows one collective of the job over n ranks starts, counted generously (its algorithm's
/// bound; send/recv: one), for the job's load check.
double collective_flows(const CollectiveJob& job, double n, int gpus_per_node);

/// The channels a ring over `ranks` runs with: `job.channels`, or the automatic choice.
int ring_channels(const CollectiveJob& job, std::span<const topo::GpuId> ranks,
                  const topo::Cluster& cluster);

/// The plan of one collective of `size` bytes per rank, over every rank set of `job` at once.
Plan build_collective_plan(const BuildEnv& env, const CollectiveJob& job, Bytes size);

/// Adds to `plan` (in `phase`, after `after`) one collective of `size` bytes per rank over
/// each of `sets` at once, with the algorithm and protocol the job (or NCCL's tuner, for the
/// first set) picks; returns the tasks that complete them all.
Handle add_collectives(Plan& plan, const BuildEnv& env, const CollectiveJob& job,
                       std::span<const std::vector<topo::GpuId>> sets, Bytes size,
                       std::uint32_t phase = 0, std::span<const PlanTaskId> after = {});
/// Bytes that cross InfiniBand if the same all-to-all went flat (every pair on its own),
/// for comparison with two-tier; 0 for other ops.
std::int64_t flat_ib_bytes(const BuildEnv& env, const CollectiveJob& job, Bytes size);

}  // namespace hopsim::work
