// The `chakra` workload: its checks and its plan.
#include "workloads/trace/chakra_job.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "workloads/costs/bounds.hpp"
#include "workloads/jobs/collective_job.hpp"
#include "workloads/trace/replay.hpp"

namespace hopsim::work {
namespace {

void check_ranks(const ChakraJob& job, const JobEnv& env, Problems& out) {
  const int gpus = env.cluster.gpu_count();
  const std::size_t ranks = job.trace->ranks.size();
  if (job.gpus.empty() && ranks > static_cast<std::size_t>(gpus)) {
    out.push_back({"/workload/trace",
                   fmt::format("the trace has {} ranks and the cluster {} GPUs", ranks, gpus)});
    return;
  }
  if (!job.gpus.empty() && job.gpus.size() != ranks) {
    out.push_back({"/workload/gpus", fmt::format("lists {} GPUs for a trace of {} ranks",
                                                 job.gpus.size(), ranks)});
    return;
  }
  std::set<int> seen;
  for (std::size_t r = 0; r < job.gpus.size(); ++r) {
    const int g = job.gpus[r];
    if (g < 0 || g >= gpus || !seen.insert(g).second) {
      out.push_back({fmt::format("/workload/gpus/{}", r),
                     g < 0 || g >= gpus
                         ? fmt::format("GPU {} is not in the cluster (GPUs 0 to {})", g, gpus - 1)
                         : fmt::format("GPU {} runs an earlier rank too", g)});
      return;
    }
  }
}

void check_groups(const ChakraJob& job, Problems& out) {
  const int ranks = static_cast<int>(job.trace->ranks.size());
  for (const auto& [name, members] : job.groups) {
    std::set<int> seen;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (members[i] < 0 || members[i] >= ranks || !seen.insert(members[i]).second) {
        out.push_back({fmt::format("/workload/groups/{}/{}", name, i),
                       members[i] < 0 || members[i] >= ranks
                           ? fmt::format("rank {} is not in the trace (ranks 0 to {})",
                                         members[i], ranks - 1)
                           : fmt::format("rank {} is listed twice", members[i])});
        return;
      }
    }
  }
}

// The flows one member's node of a collective stands for: its collective's bound (the
// algorithm's, collective_job.hpp) shared among the group's members.
double member_flows(const ChakraJob& job, const EtNode& n, int gpus_per_node) {
  if (n.collective.kind == EtCollective::Kind::Broadcast) {
    return 8;  // 8 pieces on each of members - 1 hops
  }
  const double members =
      static_cast<double>(std::max<std::size_t>(group_ranks(job, n).size(), 1));
  CollectiveJob c;
  c.op = n.collective.op;
  c.algorithm = job.algorithm_for(c.op);
  return collective_flows(c, members, gpus_per_node) / members;
}

// Simulated time and bytes that fit: every compute node's time in series, every collective's
// flows and bytes counted generously (bounds.hpp).
void check_load(const ChakraJob& job, const JobEnv& env, Problems& out) {
  double flows = 0;
  double bytes = 0;
  double compute_s = 0;
  const Roofline roof{env.cluster.gpu.peak_bf16_tflops, env.cluster.gpu.peak_fp8_tflops,
                      env.cluster.gpu.hbm_GBps};
  for (const EtRank& r : job.trace->ranks) {
    for (const EtNode& n : r.nodes) {
      if (n.type == EtNodeType::Compute) {
        compute_s += job.compute == TraceCompute::Model && !n.cpu
                         ? roofline_time(roof, n.flops, n.tensor_bytes).seconds()
                         : n.duration.seconds();
      } else if (n.type == EtNodeType::Collective) {
        flows += member_flows(job, n, env.cluster.gpus_per_node);
        bytes += 2 * static_cast<double>(n.comm_bytes);  // an all-reduce's, per member
      } else if (n.type == EtNodeType::Send) {
        flows += 1;
        bytes += static_cast<double>(n.comm_bytes);
      }
    }
  }
  if (flows > kMaxPlanTasks) {
    out.push_back({"/workload/trace",
                   fmt::format("its collectives would start about {:.3g} flows; at most {:.0g}",
                               flows, kMaxPlanTasks)});
    return;
  }
  const PlanLoad load = layer_load(flows, bytes, compute_s, env.cluster, env.nccl);
  if (const auto problem = load_problem(load, env.cluster, "this trace")) {
    out.push_back({"/workload/trace", *problem});
  }
}

}  // namespace

Time roofline_time(const Roofline& r, double flops, std::int64_t bytes) {
  const double compute_s = flops / (r.peak_bf16_tflops * 1e12 * r.efficiency);
  const double memory_s = static_cast<double>(bytes) / (r.hbm_GBps * 1e9 * r.memory_efficiency);
  return r.launch_overhead + Time::from_seconds_ceil(std::max(compute_s, memory_s));
}

double ChakraJob::estimated_plan_bytes(const JobEnv& env) const {
  double bytes = 0;
  for (const EtRank& r : trace->ranks) {
    for (const EtNode& n : r.nodes) {
      bytes += n.type == EtNodeType::Collective
                   ? member_flows(*this, n, env.cluster.gpus_per_node) * kBytesPerPlanFlow
                   : kBytesPerPlanTask;
    }
  }
  return bytes;
}

CollectiveAlgorithm ChakraJob::algorithm_for(CollectiveOp op) const {
  return algorithms[static_cast<std::size_t>(op)].value_or(
      op == CollectiveOp::AllToAll ? exchange_algorithm(EpAlgorithm::Flat)
                                   : CollectiveAlgorithm::Auto);
}

void ChakraJob::check(const JobEnv& env, Problems& out) const {
  HOPSIM_ASSERT(trace != nullptr, "a chakra job without its trace");
  if (trace->ranks.empty()) {
    out.push_back({"/workload/trace", "the trace has no rank"});
    return;
  }
  const std::size_t before = out.size();
  check_ranks(*this, env, out);
  check_groups(*this, out);
  if (compute == TraceCompute::Model &&
      (env.cluster.gpu.peak_bf16_tflops <= 0 || env.cluster.gpu.hbm_GBps <= 0)) {
    out.push_back({"/workload/compute",
                   "\"model\" prices kernels on the GPU's roofline: the cluster's gpu needs "
                   "peak_bf16_tflops and hbm_GBps"});
  }
  if (out.size() > before) {
    return;
  }
  const std::variant<Replay, Problem> replay = match_trace(*this);
  if (const auto* problem = std::get_if<Problem>(&replay)) {
    out.push_back(*problem);
    return;
  }
  check_load(*this, env, out);
}

}  // namespace hopsim::work
