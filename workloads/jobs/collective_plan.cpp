// The plans of a collective job: one collective per rank set, all at once.
#include <fmt/format.h>

#include "workloads/collectives/deepep.hpp"
#include "workloads/jobs/collective_job.hpp"

namespace hopsim::work {
namespace {

// The matrix of one rank set; every set routes its own tokens (seed + set index).
TwoTierMatrix all_to_all_matrix(const BuildEnv& env, const CollectiveJob& job,
                                std::span<const int> ranks, std::size_t set, Bytes size) {
  if (job.moe) {
    MoeRouting routing = *job.moe;
    routing.seed += set;
    return route_tokens(ranks, env.cluster, routing, job.token_bytes);
  }
  return Collectives::without_dedup(ranks, env.cluster, Collectives::uniform(ranks.size(), size));
}

// Bytes per InfiniBand piece of a two-tier exchange: chunk_tokens tokens with MoE routing (by
// default DeepEP's for the EP size), else a pair's bytes split into `chunks` pieces.
std::int64_t two_tier_chunk_bytes(const CollectiveJob& job, std::size_t ranks, Bytes size) {
  if (job.moe) {
    const std::int64_t tokens = job.chunk_tokens == kDeepEpChunks
                                    ? deepep_chunk_tokens(static_cast<std::int64_t>(ranks),
                                                          job.combine)
                                    : job.chunk_tokens;
    return tokens * job.token_bytes.n;
  }
  const std::int64_t pair = size.n / static_cast<std::int64_t>(ranks);
  return job.chunks > 1 ? (pair + job.chunks - 1) / job.chunks : 0;
}

void add_collective(Collectives& c, const BuildEnv& env, const CollectiveJob& job,
                    std::span<const int> ranks, std::size_t set, Bytes size) {
  const int n = static_cast<int>(ranks.size());
  RingOptions ring{job.protocol.value_or(env.env.nccl.protocol), job.chunks,
                   ring_channels(job, ranks, env.cluster)};
  switch (job.op) {
    case CollectiveOp::SendRecv:
      c.send_recv(ranks[0], ranks[1], size, ring.protocol);
      break;
    case CollectiveOp::AllGather:
      if (job.algorithm == CollectiveAlgorithm::Direct) {
        c.all_gather_direct(ranks, size);
      } else {
        c.ring(ranks, n - 1, size, ring);
      }
      break;
    case CollectiveOp::ReduceScatter:
      c.ring(ranks, n - 1, size, ring);
      break;
    case CollectiveOp::AllReduce:
      c.ring(ranks, 2 * (n - 1), size, ring);
      break;
    case CollectiveOp::AllToAll:
      if (job.algorithm == CollectiveAlgorithm::TwoTier) {
        const TwoTierOptions options{job.combine, two_tier_chunk_bytes(job, ranks.size(), size)};
        c.all_to_all_two_tier(ranks, all_to_all_matrix(env, job, ranks, set, size), options);
      } else {
        c.all_to_all_flat(ranks, all_to_all_matrix(env, job, ranks, set, size).gpu);
      }
      break;
  }
}

}  // namespace

int ring_channels(const CollectiveJob& job, std::span<const int> ranks,
                  const topo::Cluster& cluster) {
  if (job.channels > 0) {
    return job.channels;
  }
  for (int r : ranks) {
    if (cluster.node_of(r) != cluster.node_of(ranks.front())) {
      return cluster.spec().gpus_per_node;  // one ring per NIC, rail-aligned
    }
  }
  return 1;
}

Plan build_collective_plan(const BuildEnv& env, const CollectiveJob& job, Bytes size) {
  Plan plan;
  plan.add_phase(std::string(op_name(job.op)), job.combine ? "bwd" : "fwd");
  Collectives c(plan, env.cluster, env.env.nccl);
  const std::vector<std::vector<int>> sets = job.rank_sets(env.env.cluster, env.env.mesh);
  for (std::size_t s = 0; s < sets.size(); ++s) {
    add_collective(c, env, job, sets[s], s, size);
  }
  return plan;
}

std::int64_t flat_ib_bytes(const BuildEnv& env, const CollectiveJob& job, Bytes size) {
  if (job.op != CollectiveOp::AllToAll) {
    return 0;
  }
  std::int64_t total = 0;
  const std::vector<std::vector<int>> sets = job.rank_sets(env.env.cluster, env.env.mesh);
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const std::vector<int>& ranks = sets[s];
    const TwoTierMatrix m = all_to_all_matrix(env, job, ranks, s, size);
    for (std::size_t i = 0; i < m.gpu.n; ++i) {
      for (std::size_t j = 0; j < m.gpu.n; ++j) {
        if (env.cluster.node_of(ranks[i]) != env.cluster.node_of(ranks[j])) {
          total += m.gpu.at(i, j);
        }
      }
    }
  }
  return total;
}

}  // namespace hopsim::work
