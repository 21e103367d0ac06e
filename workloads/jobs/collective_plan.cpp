// The plans of a collective job: one collective per rank set, all at once.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "workloads/collectives/nccl_tuner.hpp"

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

// Tree pieces: `chunks`, or pieces of about 512 KiB per channel and tree (at most 32).
int tree_pieces(const CollectiveJob& job, Bytes size, int channels) {
  if (job.chunks > 0) {
    return job.chunks;
  }
  constexpr std::int64_t kPiece = 512 * 1024;
  const std::int64_t per_tree = size.n / (2 * channels);
  return static_cast<int>(std::clamp<std::int64_t>((per_tree + kPiece - 1) / kPiece, 1, 32));
}

// DeepEP's benchmark bytes per rank (tests/test_internode.py): RDMA counts every distinct
// (token, node) pair, the rank's own node included; NVLink counts every token a rank receives,
// its own included. Summed over ranks into `sums` {rdma, nvl, ranks}.
void add_deepep_bytes(const TwoTierMatrix& m, std::array<double, 3>& sums) {
  for (std::size_t i = 0; i < m.gpu.n; ++i) {
    for (std::size_t k = 0; k < m.nodes; ++k) {
      sums[0] += static_cast<double>(m.to_node[i * m.nodes + k]);
    }
    for (std::size_t j = 0; j < m.gpu.n; ++j) {
      sums[1] += static_cast<double>(m.gpu.at(j, i));
    }
  }
  sums[2] += static_cast<double>(m.gpu.n);
}

Handle add_all_to_all(Collectives& c, const BuildEnv& env, const CollectiveJob& job,
                      std::span<const int> ranks, std::size_t set, Bytes size,
                      std::array<double, 3>& deepep, std::span<const PlanTaskId> after) {
  const TwoTierMatrix m = all_to_all_matrix(env, job, ranks, set, size);
  add_deepep_bytes(m, deepep);
  switch (job.algorithm) {
    case CollectiveAlgorithm::TwoTier:
      return c.all_to_all_two_tier(
          ranks, m,
          TwoTierOptions{job.combine, two_tier_chunk_bytes(job, ranks.size(), size),
                         env.env.deepep != nullptr ? env.env.deepep->nvlink_efficiency : 1.0,
                         job.pieces.value_or(Pieces::Each)},
          after);
    case CollectiveAlgorithm::LowLatency:
      return c.all_to_all_low_latency(ranks, m.selections.n > 0 ? m.selections : m.gpu,
                                      job.combine, after);
    default:
      break;
  }
  return c.all_to_all_flat(ranks, m.gpu, after);
}

Handle add_collective(Collectives& c, const BuildEnv& env, const CollectiveJob& job,
                      const CollectiveChoice& choice, std::span<const int> ranks, std::size_t set,
                      Bytes size, std::array<double, 3>& deepep,
                      std::span<const PlanTaskId> after = {}) {
  const int n = static_cast<int>(ranks.size());
  const int channels = ring_channels(job, ranks, env.cluster);
  RingOptions options{choice.protocol, std::max(job.chunks, 1), channels, job.streamed_rings};
  if (job.op == CollectiveOp::AllToAll) {
    return add_all_to_all(c, env, job, ranks, set, size, deepep, after);
  }
  if (job.op == CollectiveOp::SendRecv) {
    return c.send_recv(ranks[0], ranks[1], size, choice.protocol, after);
  }
  if (choice.algorithm == CollectiveAlgorithm::Direct) {
    return c.all_gather_direct(ranks, size, after);
  }
  if (choice.algorithm == CollectiveAlgorithm::Nvls) {
    return c.all_reduce_nvls(ranks, size, after);
  }
  if (choice.algorithm == CollectiveAlgorithm::Tree) {
    options.chunks = tree_pieces(job, size, channels);
    return c.all_reduce_tree(ranks, size, options, after);
  }
  return c.ring(ranks, job.op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1, size, options,
                after);
}

CollectiveAlgorithm from_nccl(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::Tree:
      return CollectiveAlgorithm::Tree;
    case NcclAlgo::Nvls:
      return CollectiveAlgorithm::Nvls;
    case NcclAlgo::Ring:
      break;
  }
  return CollectiveAlgorithm::Ring;
}

}  // namespace

CollectiveChoice choose(const CollectiveJob& job, const JobEnv& env, std::span<const int> ranks,
                        Bytes size) {
  CollectiveChoice choice{job.algorithm, job.protocol.value_or(env.nccl.protocol)};
  const bool tunable = job.op == CollectiveOp::AllReduce || job.op == CollectiveOp::AllGather ||
                       job.op == CollectiveOp::ReduceScatter;
  if (!tunable || (job.algorithm != CollectiveAlgorithm::Auto && !job.auto_protocol)) {
    if (choice.algorithm == CollectiveAlgorithm::Auto) {
      choice.algorithm = CollectiveAlgorithm::Ring;
    }
    return choice;
  }
  std::vector<int> nodes;
  for (int r : ranks) {
    nodes.push_back(r / env.cluster.gpus_per_node);
  }
  std::sort(nodes.begin(), nodes.end());
  TunerInput in;
  in.coll = job.op == CollectiveOp::AllReduce   ? NcclColl::AllReduce
            : job.op == CollectiveOp::AllGather ? NcclColl::AllGather
                                                : NcclColl::ReduceScatter;
  in.ranks = static_cast<int>(ranks.size());
  in.nodes = static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
  in.size = size;
  in.nvlink = env.cluster.nvlink.bandwidth;
  in.node_nics = Bandwidth{env.cluster.nic.bandwidth.bytes_per_s * env.cluster.gpus_per_node};
  std::vector<Prediction> candidates = nccl_predictions(env.nccl, in);
  std::erase_if(candidates, [&](const Prediction& p) {
    return (job.algorithm != CollectiveAlgorithm::Auto &&
            from_nccl(p.algorithm) != job.algorithm) ||
           (!job.auto_protocol && p.protocol != choice.protocol);
  });
  if (!candidates.empty()) {
    const Prediction best = fastest(candidates);
    choice = {from_nccl(best.algorithm), best.protocol};
  }
  return choice;
}

std::vector<Case> CollectiveJob::cases(const BuildEnv& env) const {
  std::vector<Case> out;
  out.reserve(sizes.size());
  const std::vector<std::vector<int>> sets = rank_sets(env.env.cluster, env.env.mesh);
  for (Bytes size : sizes) {
    const CollectiveChoice choice = choose(*this, env.env, sets.front(), size);
    Plan plan;
    plan.phase(op_phase(op), combine ? PhasePass::Bwd : PhasePass::Fwd);
    Collectives c(plan, env.cluster, env.env.nccl);
    std::array<double, 3> deepep{};
    for (std::size_t s = 0; s < sets.size(); ++s) {
      add_collective(c, env, *this, choice, sets[s], s, size, deepep);
    }
    const bool nccl = op != CollectiveOp::AllToAll;
    Case one{fmt::format("{} B", size.n), std::move(plan),
             fmt::format("{}{}{}", algorithm_name(choice.algorithm), nccl ? "/" : "",
                         nccl ? protocol_name(choice.protocol) : "")};
    if (moe) {
      one.metrics = {{"deepep_rdma_bytes_per_rank", deepep[0] / deepep[2]},
                     {"deepep_nvl_bytes_per_rank", deepep[1] / deepep[2]}};
    }
    out.push_back(std::move(one));
  }
  return out;
}

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

Handle add_collectives(Plan& plan, const BuildEnv& env, const CollectiveJob& job,
                       std::span<const std::vector<int>> sets, Bytes size, std::uint32_t phase,
                       std::span<const PlanTaskId> after) {
  Handle all;
  if (sets.empty()) {
    return all;
  }
  const CollectiveChoice choice = choose(job, env.env, sets.front(), size);
  Collectives c(plan, env.cluster, env.env.nccl, phase);
  std::array<double, 3> deepep{};
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const Handle h = add_collective(c, env, job, choice, sets[s], s, size, deepep, after);
    all.done.insert(all.done.end(), h.done.begin(), h.done.end());
  }
  return all;
}

Plan build_collective_plan(const BuildEnv& env, const CollectiveJob& job, Bytes size) {
  CollectiveJob one = job;
  one.sizes = {size};
  return std::move(one.cases(env).front().plan);
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
