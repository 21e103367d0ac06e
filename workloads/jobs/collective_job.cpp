// Collective jobs: checks, plans per op and algorithm, nccl-tests bandwidth factors.
#include "workloads/jobs/collective_job.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "workloads/costs/bounds.hpp"

namespace hopsim::work {
namespace {

constexpr double kMaxFlows = 10e6;  // about 6 GB: 1M flows peak at 0.6 GB

using Algo = CollectiveAlgorithm;

// Bytes one collective of `size` bytes per rank moves over n ranks, counted generously.
double bytes_per_set(const CollectiveJob& job, double n, double size) {
  if (job.moe) {  // a token reaches at most min(top_k, n) GPUs; two-tier adds the IB hop
    const double reached = std::min(static_cast<double>(job.moe->top_k), n);
    return 2 * static_cast<double>(job.moe->tokens_per_gpu) * n *
           static_cast<double>(job.token_bytes.n) * reached;
  }
  const double per_rank = std::ceil(size / n);
  const double chunks = std::max(job.chunks, 1);
  const double piece = std::ceil(per_rank / chunks) * chunks;
  switch (job.op) {
    case CollectiveOp::SendRecv:
      return size;
    case CollectiveOp::AllGather:
    case CollectiveOp::ReduceScatter:
      return job.algorithm == CollectiveAlgorithm::Direct ? n * (n - 1) * per_rank
                                                          : (n - 1) * n * piece;
    case CollectiveOp::AllReduce:  // the ring's; a tree moves about as much, NVLS less
      return 2 * (n - 1) * n * piece + 4 * n * size;
    case CollectiveOp::AllToAll:
      return 2 * n * (n - 1) * per_rank;  // two-tier: the IB hop, then NVLink
  }
  return 0;
}

// The largest size must fit in simulated time and byte counts; ring chunks carry a byte each.
void check_load(const CollectiveJob& job, const JobEnv& env, double n, double sets, Problems& out) {
  const Bytes largest = *std::max_element(job.sizes.begin(), job.sizes.end());
  const Bytes smallest = *std::min_element(job.sizes.begin(), job.sizes.end());
  const auto per_rank =
      (smallest.n + static_cast<std::int64_t>(n) - 1) / static_cast<std::int64_t>(n);
  if (job.algorithm == CollectiveAlgorithm::Ring && per_rank < job.chunks) {  // 0 passes
    out.push_back({"/workload/chunks",
                   fmt::format("{} chunks of a ring step of {} byte(s) ({} bytes over {} ranks): "
                               "every chunk must carry at least one byte",
                               job.chunks, per_rank, smallest.n, n)});
    return;
  }
  PlanLoad load;
  load.flows = collective_flows(job, n, env.cluster.gpus_per_node) * sets;
  load.bytes = bytes_per_set(job, n, static_cast<double>(largest.n)) * sets;
  load.flow_latency = longest_route_latency(env.cluster);
  load.fixed = env.nccl.nvls.nvlink_hop + env.nccl.nvls.net_hop;
  for (Protocol p : kProtocols) {
    for (const HopLatency* l : {&env.nccl.ring_latency(p), &env.nccl.tree_latency(p)}) {
      load.flow_latency = std::max({load.flow_latency, l->nvlink_hop, l->net_hop});
      load.fixed = std::max(load.fixed, l->base);
    }
  }
  if (const auto problem = load_problem(load, env.cluster, "this collective")) {
    out.push_back({job.moe ? "/workload/moe" : "/workload/bytes", *problem});
  }
  // Routing draws, for every token of every rank, its nodes and then top_k experts among
  // theirs: work ~ tokens x ranks x (nodes + candidate experts). Bound it to about a second.
  if (job.moe) {
    constexpr double kMaxRoutingWork = 5e8;
    const double nodes = std::ceil(n / env.cluster.gpus_per_node);
    const double limit = job.moe->max_nodes_per_token > 0
                             ? std::min(nodes, static_cast<double>(job.moe->max_nodes_per_token))
                             : nodes;
    const double candidates = static_cast<double>(job.moe->experts) * limit / nodes;
    const double work =
        static_cast<double>(job.moe->tokens_per_gpu) * n * sets * (nodes + candidates);
    if (work > kMaxRoutingWork) {
      out.push_back({"/workload/moe/tokens_per_gpu",
                     fmt::format("routing {} tokens on each of {} ranks is too much work ({:.3g} "
                                 "draws, at most {:.3g})",
                                 job.moe->tokens_per_gpu, n * sets, work, kMaxRoutingWork)});
    }
  }
}

// NVLS reduces in the NVSwitch of one node, where the cluster has it.
void check_nvls(const std::vector<std::vector<topo::GpuId>>& sets, const JobEnv& env,
                Problems& out) {
  if (!env.nccl.nvls_supported) {
    out.push_back({"/workload/algorithm",
                   fmt::format("cluster \"{}\" has no NVLS (its nccl section has no \"nvls\")",
                               env.cluster.name)});
    return;
  }
  const int per_node = env.cluster.gpus_per_node;
  for (const std::vector<topo::GpuId>& set : sets) {
    for (const topo::GpuId r : set) {
      if (r.value() / per_node != set.front().value() / per_node) {
        out.push_back({"/workload/algorithm",
                       "nvls runs inside one node; across nodes use \"tree\" or \"ring\""});
        return;
      }
    }
  }
}

void check_ranks(const CollectiveJob& job, int gpus, Problems& out) {
  std::vector<bool> seen(static_cast<std::size_t>(gpus), false);
  for (std::size_t i = 0; i < job.ranks.size(); ++i) {
    const int r = job.ranks[i];
    const std::string at = fmt::format("/workload/ranks/{}", i);
    if (r < 0 || r >= gpus) {
      out.push_back({at, fmt::format("GPU {} is not in the cluster (GPUs 0 to {})", r, gpus - 1)});
      return;
    }
    if (seen[static_cast<std::size_t>(r)]) {
      out.push_back({at, fmt::format("rank {} is listed twice", r)});
      return;
    }
    seen[static_cast<std::size_t>(r)] = true;
  }
}

// The sizes of the rank sets, the flow bound, and what send_recv and chunks need.
void check_sets(const CollectiveJob& job, const std::vector<std::vector<topo::GpuId>>& sets,
                int gpus_per_node, Problems& out) {
  const std::string where = job.group ? "/workload/group" : "/workload/ranks";
  const std::size_t n = sets.front().size();
  if (n < 2) {
    out.push_back({job.group || !job.ranks.empty() ? where : "/workload",
                   fmt::format("a collective needs at least 2 ranks, got {}", n)});
    return;
  }
  if (job.op == CollectiveOp::SendRecv && n != 2) {
    out.push_back({where, fmt::format("send_recv goes from one rank to another: it takes "
                                      "exactly 2 ranks, got {}",
                                      n)});
    return;
  }
  const double flows = collective_flows(job, static_cast<double>(n), gpus_per_node) *
                       static_cast<double>(sets.size());
  if (flows > kMaxFlows) {
    const std::string over = sets.size() == 1
                                 ? fmt::format("{} ranks", n)
                                 : fmt::format("{} groups of {} ranks", sets.size(), n);
    out.push_back({"/workload", fmt::format("{} {} over {} in {} chunk(s) makes {:.3g} flows per "
                                            "collective; at most {:.3g} are supported",
                                            algorithm_name(job.algorithm), op_name(job.op), over,
                                            job.chunks, flows, kMaxFlows)});
  }
}

// The sets' size and count, for the bounds.
std::pair<double, double> shape_of(const std::vector<std::vector<topo::GpuId>>& sets) {
  return {static_cast<double>(sets.front().size()), static_cast<double>(sets.size())};
}

}  // namespace

double CollectiveJob::estimated_plan_bytes(const JobEnv& env) const {
  const auto sets = rank_sets(env.cluster, env.mesh);
  if (sets.empty() || sets.front().size() < 2) {
    return 0;
  }
  const double flows =
      collective_flows(*this, static_cast<double>(sets.front().size()),
                       env.cluster.gpus_per_node) *
      static_cast<double>(sets.size());
  return flows * (kPlanBytesPerFlow * static_cast<double>(sizes.size()) + kSimulatedBytesPerFlow);
}

std::vector<std::vector<topo::GpuId>> CollectiveJob::rank_sets(const topo::Spec& cluster,
                                                               const Mesh& mesh) const {
  if (group) {
    return mesh.groups(*group);
  }
  std::vector<topo::GpuId> set;
  if (!ranks.empty()) {
    for (const int r : ranks) {
      set.emplace_back(r);
    }
    return {set};
  }
  for (int r = 0; r < cluster.gpu_count(); ++r) {
    set.emplace_back(r);
  }
  return {set};
}

namespace {

// The first setting of `j` that its op and algorithm do not take, if any.
std::optional<Problem> tunables_problem(const CollectiveJob& j) {
  const Algo a = j.algorithm;
  if (!implements(j.op, a)) {
    return Problem{
        "/workload/algorithm",
        fmt::format("algorithm \"{}\" does not implement {}; {} takes {}", algorithm_name(a),
                    op_name(j.op), op_name(j.op), algorithms_of(j.op))};
  }
  const AlgorithmRow& row = algorithm_row(a);
  if (j.chunks < 0 || (j.chunks != 0 && (!row.chunks || j.op == CollectiveOp::SendRecv))) {
    return Problem{
        "/workload/chunks",
        fmt::format("chunks apply to ring, tree and auto algorithms and to {} "
                    "all-to-all; {} {} sends each pair's data as one flow",
                    ep_algorithm_list(is_chunked, false), algorithm_name(a), op_name(j.op))};
  }
  if (j.channels != 0 && !row.channels) {
    return Problem{"/workload/channels", "channels apply to ring, tree and auto algorithms"};
  }
  if (j.combine && !row.combine) {
    return Problem{"/workload/combine", fmt::format("combine applies to all_to_all {}",
                                                    ep_algorithm_list(has_combine, false))};
  }
  const std::optional<EpAlgorithm> x = exchange_of(a);
  const bool chunked = x && ep_algorithm_row(*x).chunked;
  if (j.chunk_tokens != kDeepEpChunks && (!j.moe || !chunked)) {
    return Problem{"/workload/chunk_tokens",
                   fmt::format("chunk_tokens applies to all_to_all {} with moe routing",
                               ep_algorithm_list(is_chunked, false))};
  }
  if (j.comm_sms != 0 && !x) {
    return Problem{"/workload/comm_sms", fmt::format("comm_sms applies to all_to_all {}",
                                                     ep_algorithm_list(nullptr, false))};
  }
  if (j.pieces && !chunked) {
    return Problem{"/workload/pieces", fmt::format("pieces applies to all_to_all {}",
                                                   ep_algorithm_list(is_chunked, false))};
  }
  if (j.group && !j.ranks.empty()) {
    return Problem{"/workload/group", "give either ranks or group, not both"};
  }
  if (j.sizes.empty()) {
    return Problem{"/workload/bytes", "expected at least one size"};
  }
  return std::nullopt;
}

}  // namespace

void CollectiveJob::check(const JobEnv& env, Problems& out) const {
  if (const std::optional<Problem> problem = tunables_problem(*this)) {
    out.push_back(*problem);
    return;
  }
  if (const std::optional<EpAlgorithm> x = exchange_of(algorithm)) {
    if (const std::string missing = missing_constants(*x, env.ep_libraries()); !missing.empty()) {
      out.push_back({"/workload/algorithm", missing});
      return;
    }
  }
  check_ranks(*this, env.cluster.gpu_count(), out);
  if (!out.empty()) {
    return;
  }
  const std::vector<std::vector<topo::GpuId>> sets = rank_sets(env.cluster, env.mesh);
  check_sets(*this, sets, env.cluster.gpus_per_node, out);
  if (out.empty() && algorithm == Algo::Nvls) {
    check_nvls(sets, env, out);
  }
  if (out.empty()) {
    const auto [n, count] = shape_of(sets);
    check_load(*this, env, n, count, out);
  }
  if (moe && out.empty()) {
    if (op != CollectiveOp::AllToAll) {
      out.push_back({"/workload/moe", "\"moe\" routing applies to op \"all_to_all\" only"});
      return;
    }
    const Problems routing =
        check_routing(*moe, sets.front(), env.cluster.gpus_per_node, "/workload/moe",
                      "/workload/moe/placement", "/workload/moe/counts");
    out.insert(out.end(), routing.begin(), routing.end());
  }
}

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

}  // namespace hopsim::work
