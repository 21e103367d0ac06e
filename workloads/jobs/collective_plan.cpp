// The plans of a collective job: one collective per rank set, all at once.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "workloads/collectives/nccl_tuner.hpp"
#include "workloads/jobs/collective_job.hpp"

namespace hopsim::work {
namespace {

// The matrix of one rank set; every set routes its own tokens (seed + set index).
TwoTierMatrix all_to_all_matrix(const BuildEnv& env, const CollectiveJob& job,
                                std::span<const topo::GpuId> ranks, std::size_t set, Bytes size) {
  if (job.moe) {
    MoeRouting routing = *job.moe;
    routing.seed += set;
    return route_tokens(ranks, env.cluster, routing, job.token_bytes);
  }
  return Collectives::without_dedup(ranks, env.cluster, Collectives::uniform(ranks.size(), size));
}

// Bytes per InfiniBand piece of a chunked exchange: chunk_tokens tokens with MoE routing (by
// default the library's for the EP size), else a pair's bytes split into `chunks` pieces.
std::int64_t exchange_chunk_bytes(const CollectiveJob& job, EpAlgorithm x, std::size_t ranks,
                                  Bytes size) {
  if (job.moe) {
    const ExchangeOp op = job.combine ? ExchangeOp::Combine : ExchangeOp::Dispatch;
    const std::int64_t tokens = job.chunk_tokens == kDeepEpChunks
                                    ? default_chunk_tokens(x, static_cast<std::int64_t>(ranks), op)
                                    : job.chunk_tokens;
    return tokens * job.token_bytes.n;
  }
  const std::int64_t pair = size.n / static_cast<std::int64_t>(ranks);
  return job.chunks > 1 ? (pair + job.chunks - 1) / job.chunks : 0;
}

constexpr int kMaxTreePieces = 32;  // automatic tree pieces per channel and tree

// Tree pieces: `chunks`, or pieces of about 512 KiB per channel and tree (at most 32).
int tree_pieces(const CollectiveJob& job, Bytes size, int channels) {
  if (job.chunks > 0) {
    return job.chunks;
  }
  constexpr std::int64_t kPiece = 512 * 1024;
  const std::int64_t per_tree = size.n / (2 * channels);
  return static_cast<int>(
      std::clamp<std::int64_t>((per_tree + kPiece - 1) / kPiece, 1, kMaxTreePieces));
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

// What one collective's builder reads: where it adds its tasks, the job, one rank set, the size
// per rank, the ring options (protocol, chunks, channels, streamed) and what it waits for.
struct BuildArgs {
  Collectives& c;
  const BuildEnv& env;
  const CollectiveJob& job;
  std::span<const topo::GpuId> ranks;
  std::size_t set;
  Bytes size;
  RingOptions options;
  std::array<double, 3>& deepep;  ///< DeepEP's benchmark byte counts, summed over the sets
  std::span<const PlanTaskId> after;
};

// The exchange matrix of an all-to-all (every all-to-all algorithm), its DeepEP bytes counted.
TwoTierMatrix exchange_matrix(const BuildArgs& a) {
  const TwoTierMatrix m = all_to_all_matrix(a.env, a.job, a.ranks, a.set, a.size);
  add_deepep_bytes(m, a.deepep);
  return m;
}

// The steps of a ring over n ranks: an all-reduce goes round twice (reduce-scatter, then
// all-gather), the other ops once.
int ring_steps(CollectiveOp op, int n) {
  return op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1;
}

// One builder per algorithm (kAlgorithmImpls below). The ring also carries send/recv (a ring
// of two); auto reaches a builder only when NCCL's tuner had no candidate, and runs the ring.
Handle build_ring(const BuildArgs& a) {
  if (a.job.op == CollectiveOp::SendRecv) {
    return a.c.send_recv(a.ranks[0], a.ranks[1], a.size, a.options.protocol, a.after);
  }
  return a.c.ring(a.ranks, ring_steps(a.job.op, static_cast<int>(a.ranks.size())), a.size,
                  a.options, a.after);
}

Handle build_direct(const BuildArgs& a) {
  return a.c.all_gather_direct(a.ranks, a.size, a.after);
}

Handle build_tree(const BuildArgs& a) {
  RingOptions options = a.options;
  options.chunks = tree_pieces(a.job, a.size, options.channels);
  return a.c.all_reduce_tree(a.ranks, a.size, options, a.after);
}

Handle build_nvls(const BuildArgs& a) {
  return a.c.all_reduce_nvls(a.ranks, a.size, a.after);
}

// Every all-to-all algorithm: the EP exchange of its row (collectives/ep_algorithms.hpp).
Handle build_exchange(EpAlgorithm x, const BuildArgs& a) {
  const TwoTierMatrix m = exchange_matrix(a);
  Exchange exchange{a.ranks,
                    m,
                    a.job.combine ? ExchangeOp::Combine : ExchangeOp::Dispatch,
                    exchange_chunk_bytes(a.job, x, a.ranks.size(), a.size),
                    a.job.pieces.value_or(Pieces::Each),
                    a.job.comm_sms,
                    a.env.env.ep_libraries(),
                    a.after};
  exchange.token_size = a.job.token_bytes.n;  // 0 without a routed token (a plain all-to-all)
  return add_exchange(a.c, x, exchange);
}

// Flows one collective over n ranks starts, counted generously (the job's load bound): ring
// steps x ranks x chunks x channels; a tree about twice per piece per GPU, up and down; every
// pair (two-tier: times the pieces each pair is cut into, plus forwards).
double ring_flows(const CollectiveJob& job, double n, double channels) {
  return ring_steps(job.op, static_cast<int>(n)) * n * std::max(job.chunks, 1) * channels;
}

double tree_piece_flows(double n, double pieces, double channels) {
  return 4 * n * pieces * channels;
}

double tree_flows(const CollectiveJob& job, double n, double channels) {
  return tree_piece_flows(n, job.chunks > 0 ? job.chunks : kMaxTreePieces, channels);
}

double auto_flows(const CollectiveJob& job, double n, double channels) {
  // The tuner's tree cuts its own pieces, at most kMaxTreePieces.
  return ring_flows(job, n, channels) + tree_piece_flows(n, kMaxTreePieces, channels);
}

double direct_flows(const CollectiveJob& /*job*/, double n, double /*channels*/) {
  return n * (n - 1);
}

// InfiniBand pieces of one (source, node) pair of a chunked exchange, generously: with MoE
// routing its tokens over chunk_tokens (DeepEP's are at least 8), else every pair of the node
// (at most one per GPU there) cut in `chunks`.
double exchange_pieces(const CollectiveJob& job, double n, int gpus_per_node) {
  if (job.moe) {
    if (job.chunk_tokens == 0) {
      return 1;
    }
    const double per_chunk = job.chunk_tokens > 0 ? static_cast<double>(job.chunk_tokens) : 8;
    return std::ceil(static_cast<double>(job.moe->tokens_per_gpu) / per_chunk);
  }
  return job.chunks > 1 ? job.chunks * std::min<double>(n, gpus_per_node) : 1;
}

// The behaviour columns of NCCL's rows of the algorithm table (collectives/algorithms.hpp
// holds the name, ops and tunables), in its order: a new algorithm is a row there and one here.
// The all-to-all rows run their EP exchange (build_exchange) and take its flow bound.
struct AlgorithmImpl {
  CollectiveAlgorithm algorithm;
  Handle (*build)(const BuildArgs&);
  double (*flows)(const CollectiveJob&, double n, double channels);
};

constexpr std::array<AlgorithmImpl, kNcclAlgorithms.size()> kAlgorithmImpls{{
    {CollectiveAlgorithm::Ring, build_ring, ring_flows},
    {CollectiveAlgorithm::Direct, build_direct, direct_flows},
    {CollectiveAlgorithm::Tree, build_tree, tree_flows},
    {CollectiveAlgorithm::Nvls, build_nvls, direct_flows},
    {CollectiveAlgorithm::Auto, build_ring, auto_flows},
}};
static_assert(in_enum_order(kAlgorithmImpls, &AlgorithmImpl::algorithm));

const AlgorithmImpl& impl(CollectiveAlgorithm a) {
  return kAlgorithmImpls[static_cast<std::size_t>(a)];
}

Handle add_collective(Collectives& c, const BuildEnv& env, const CollectiveJob& job,
                      const CollectiveChoice& choice, std::span<const topo::GpuId> ranks,
                      std::size_t set, Bytes size, std::array<double, 3>& deepep,
                      std::span<const PlanTaskId> after = {}) {
  const int channels = ring_channels(job, ranks, env.cluster);
  const RingOptions options{choice.protocol, std::max(job.chunks, 1), channels, job.streamed_rings};
  const BuildArgs args{c, env, job, ranks, set, size, options, deepep, after};
  if (const std::optional<EpAlgorithm> x = exchange_of(choice.algorithm)) {
    return build_exchange(*x, args);
  }
  return impl(choice.algorithm).build(args);
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

CollectiveChoice choose(const CollectiveJob& job, const JobEnv& env,
                        std::span<const topo::GpuId> ranks, Bytes size) {
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
  for (const topo::GpuId r : ranks) {
    nodes.push_back(r.value() / env.cluster.gpus_per_node);
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
  const std::vector<std::vector<topo::GpuId>> sets = rank_sets(env.env.cluster, env.env.mesh);
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

double collective_flows(const CollectiveJob& job, double n, int gpus_per_node) {
  if (job.op == CollectiveOp::SendRecv) {
    return 1;
  }
  if (const std::optional<EpAlgorithm> x = exchange_of(job.algorithm)) {
    return ep_algorithm_row(*x).flows(ExchangeShape{n, static_cast<double>(gpus_per_node),
                                                    exchange_pieces(job, n, gpus_per_node),
                                                    job.pieces == Pieces::Streamed});
  }
  const double channels = job.channels > 0 ? job.channels : std::min<double>(gpus_per_node, n);
  return impl(job.algorithm).flows(job, n, channels);
}

int ring_channels(const CollectiveJob& job, std::span<const topo::GpuId> ranks,
                  const topo::Cluster& cluster) {
  if (job.channels > 0) {
    return job.channels;
  }
  for (const topo::GpuId r : ranks) {
    if (cluster.node_of(r) != cluster.node_of(ranks.front())) {
      return cluster.spec().gpus_per_node;  // one ring per NIC, rail-aligned
    }
  }
  return 1;
}

Handle add_collectives(Plan& plan, const BuildEnv& env, const CollectiveJob& job,
                       std::span<const std::vector<topo::GpuId>> sets, Bytes size,
                       std::uint32_t phase, std::span<const PlanTaskId> after) {
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
  const std::vector<std::vector<topo::GpuId>> sets = job.rank_sets(env.env.cluster, env.env.mesh);
  for (std::size_t s = 0; s < sets.size(); ++s) {
    const std::vector<topo::GpuId>& ranks = sets[s];
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
