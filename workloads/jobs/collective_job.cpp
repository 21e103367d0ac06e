// Collective jobs: plan construction per op and algorithm, nccl-tests bandwidth factors.
#include "workloads/jobs/collective_job.hpp"

#include "sim/assert.hpp"

namespace hopsim::work {

double busbw_factor(CollectiveOp op, int n) {
  const double nd = n;
  switch (op) {
    case CollectiveOp::AllReduce:
      return 2.0 * (nd - 1) / nd;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll:
      return (nd - 1) / nd;
    case CollectiveOp::SendRecv:
      return 1.0;
  }
  return 1.0;
}

const char* op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::SendRecv:
      return "send_recv";
    case CollectiveOp::AllGather:
      return "all_gather";
    case CollectiveOp::ReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::AllReduce:
      return "all_reduce";
    case CollectiveOp::AllToAll:
      return "all_to_all";
  }
  return "?";
}

const char* algorithm_name(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Ring:
      return "ring";
    case CollectiveAlgorithm::Direct:
      return "direct";
    case CollectiveAlgorithm::Flat:
      return "flat";
    case CollectiveAlgorithm::TwoTier:
      return "two_tier";
  }
  return "?";
}

namespace {

TwoTierMatrix all_to_all_matrix(const topo::Cluster& cluster, const CollectiveJob& job,
                                Bytes size) {
  if (job.moe) {
    return route_tokens(job.ranks, cluster, *job.moe);
  }
  return Collectives::without_dedup(job.ranks, cluster,
                                    Collectives::uniform(job.ranks.size(), size));
}

}  // namespace

Plan build_collective_plan(const topo::Cluster& cluster, const CollectiveJob& job, Bytes size) {
  Plan plan;
  plan.add_phase(op_name(job.op), "fwd");
  Collectives c(plan, cluster, job.latency);
  const std::span<const int> ranks = job.ranks;
  switch (job.op) {
    case CollectiveOp::SendRecv:
      c.send_recv(ranks[0], ranks[1], size);
      break;
    case CollectiveOp::AllGather:
      if (job.algorithm == CollectiveAlgorithm::Direct) {
        c.all_gather_direct(ranks, size);
      } else {
        c.all_gather_ring(ranks, size, job.chunks);
      }
      break;
    case CollectiveOp::ReduceScatter:
      c.reduce_scatter_ring(ranks, size, job.chunks);
      break;
    case CollectiveOp::AllReduce:
      c.all_reduce_ring(ranks, size, job.chunks);
      break;
    case CollectiveOp::AllToAll:
      if (job.algorithm == CollectiveAlgorithm::TwoTier) {
        c.all_to_all_two_tier(ranks, all_to_all_matrix(cluster, job, size));
      } else {
        c.all_to_all_flat(ranks, all_to_all_matrix(cluster, job, size).gpu);
      }
      break;
  }
  return plan;
}

std::int64_t flat_ib_bytes(const topo::Cluster& cluster, const CollectiveJob& job, Bytes size) {
  if (job.op != CollectiveOp::AllToAll) {
    return 0;
  }
  const TwoTierMatrix m = all_to_all_matrix(cluster, job, size);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < m.gpu.n; ++i) {
    for (std::size_t j = 0; j < m.gpu.n; ++j) {
      if (cluster.node_of(job.ranks[i]) != cluster.node_of(job.ranks[j])) {
        total += m.gpu.at(i, j);
      }
    }
  }
  return total;
}

}  // namespace hopsim::work
