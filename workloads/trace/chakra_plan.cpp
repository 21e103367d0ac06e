// The plan of a `chakra` job: the replay's units, in order, as tasks.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "workloads/jobs/collective_job.hpp"
#include "workloads/trace/chakra_job.hpp"
#include "workloads/trace/replay.hpp"

namespace hopsim::work {
namespace {

constexpr std::size_t kLabelChars = 80;

class TracePlan {
 public:
  TracePlan(const ChakraJob& job, const BuildEnv& env) : job_(job), env_(env) {
    main_ = plan_.phase(PhaseKind::Main, PhasePass::Fwd);
    map_streams();
  }

  Plan build(const Replay& replay) {
    ends_.resize(replay.units.size());
    std::vector<PlanTaskId> after;
    for (std::size_t u = 0; u < replay.units.size(); ++u) {
      const ReplayUnit& unit = replay.units[u];
      after.clear();
      for (const std::uint32_t b : unit.after) {
        after.insert(after.end(), ends_[b].begin(), ends_[b].end());
      }
      switch (unit.kind) {
        case ReplayUnit::Kind::Node: ends_[u] = {add_node(unit.members.front(), after)}; break;
        case ReplayUnit::Kind::Collective: ends_[u] = add_collective(unit, after); break;
        case ReplayUnit::Kind::SendRecv: ends_[u] = {add_pair(unit, after)}; break;
      }
    }
    return std::move(plan_);
  }

 private:
  const ChakraJob& job_;
  const BuildEnv& env_;
  Plan plan_;
  std::uint32_t main_ = 0;
  std::map<std::int64_t, StreamIndex> streams_;
  std::vector<std::vector<PlanTaskId>> ends_;

  const EtNode& node(NodeRef n) const {
    return job_.trace->ranks[static_cast<std::size_t>(n.rank)].nodes[n.index];
  }
  void label(PlanTaskId t, const EtNode& n) {
    plan_.set_label(t, std::string_view(n.name).substr(0, kLabelChars));
  }
  void wait(PlanTaskId t, std::span<const PlanTaskId> after) {
    for (const PlanTaskId b : after) {
      plan_.add_dependency(b, t);
    }
  }

  // The CUDA stream that runs the most kernels is hopsim's compute stream; every other one is
  // a stream of its own ("stream N"), so kernels on different streams may overlap.
  void map_streams() {
    std::map<std::int64_t, std::size_t> kernels;
    for (const EtRank& r : job_.trace->ranks) {
      for (const EtNode& n : r.nodes) {
        if (n.type == EtNodeType::Compute && !n.cpu && n.stream) {
          ++kernels[*n.stream];
        }
      }
    }
    const auto busiest =
        std::max_element(kernels.begin(), kernels.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    for (const auto& [stream, count] : kernels) {
      streams_[stream] = stream == busiest->first
                             ? kComputeStream
                             : plan_.add_stream(fmt::format("stream {}", stream));
    }
  }

  // A kernel on its GPU's stream; a host op as a delay (it holds no GPU stream); a metadata
  // node as a delay of nothing.
  PlanTaskId add_node(NodeRef ref, std::span<const PlanTaskId> after) {
    const EtNode& n = node(ref);
    const topo::GpuId gpu = job_.gpu_of(ref.rank);
    PlanTaskId t = 0;
    if (n.type == EtNodeType::Metadata || n.cpu) {
      t = plan_.add_delay(gpu, n.type == EtNodeType::Metadata ? Time{} : n.duration, main_);
    } else {
      ComputeTask task{gpu, n.duration, Flops{n.flops}, Source::Recorded, main_};
      if (job_.compute == TraceCompute::Model) {
        task.duration = roofline_time(env_.compute->roofline(), n.flops, n.tensor_bytes);
        task.source = Source::Roofline;
      }
      if (n.stream) {
        task.stream = streams_.at(*n.stream);
      }
      t = plan_.add_compute(task);
    }
    label(t, n);
    wait(t, after);
    return t;
  }

  // Every member's collective as one hopsim collective over the group's GPUs, after every
  // member's dependencies; a barrier all-reduces its comm_size bytes (PyTorch's barrier
  // all-reduces one element); a group of one rank moves nothing.
  std::vector<PlanTaskId> add_collective(const ReplayUnit& unit,
                                         std::span<const PlanTaskId> after) {
    const EtNode& n = node(unit.members.front());
    if (unit.members.size() == 1 || (n.comm_bytes == 0 && n.collective.kind ==
                                                              EtCollective::Kind::Broadcast)) {
      return {add_node_delay(unit.members.front(), after)};
    }
    std::vector<std::vector<topo::GpuId>> sets(1);
    for (const NodeRef m : unit.members) {
      sets[0].push_back(job_.gpu_of(m.rank));
    }
    if (n.collective.kind == EtCollective::Kind::Broadcast) {
      return join(sets[0].front(), add_broadcast(sets[0], n, after),
                  plan_.phase(PhaseKind::Broadcast, PhasePass::Fwd));
    }
    CollectiveJob c;
    c.op = n.collective.op;  // a barrier all-reduces its bytes
    c.algorithm = job_.algorithm_for(c.op);
    const std::uint32_t phase = plan_.phase(op_phase(c.op), PhasePass::Fwd);
    const PlanTaskId first = static_cast<PlanTaskId>(plan_.tasks().size());
    Handle h = add_collectives(plan_, env_, c, sets, Bytes{n.comm_bytes}, phase, after);
    for (PlanTaskId t = first; t < plan_.tasks().size(); ++t) {
      if (plan_.tasks()[t].label == 0) {
        label(t, n);
      }
    }
    return join(sets[0].front(), std::move(h.done), phase);
  }

  // One task that ends when all of `done` have (a delay of nothing on `gpu`, in the
  // collective's phase), so that what waits for a collective waits for one task, not for each
  // of its last flows.
  std::vector<PlanTaskId> join(topo::GpuId gpu, std::vector<PlanTaskId> done, std::uint32_t phase) {
    if (done.size() <= 1) {
      return done;
    }
    const PlanTaskId j = plan_.add_delay(gpu, Time{}, phase);
    wait(j, done);
    return {j};
  }

  // NCCL's ring broadcast from the group's first rank: its bytes in kBroadcastPieces pieces
  // passed along the group's order, each GPU forwarding a piece as it lands, pieces in order
  // on each hop; every flow pays its route's latency.
  std::vector<PlanTaskId> add_broadcast(const std::vector<topo::GpuId>& gpus, const EtNode& n,
                                        std::span<const PlanTaskId> after) {
    constexpr std::int64_t kBroadcastPieces = 8;
    const std::int64_t pieces = std::min(kBroadcastPieces, n.comm_bytes);
    const std::uint32_t phase = plan_.phase(PhaseKind::Broadcast, PhasePass::Fwd);
    std::vector<PlanTaskId> last_on_hop(gpus.size() - 1);
    for (std::int64_t p = 0; p < pieces; ++p) {
      const std::int64_t bytes = n.comm_bytes * (p + 1) / pieces - n.comm_bytes * p / pieces;
      for (std::size_t h = 0; h + 1 < gpus.size(); ++h) {
        const PlanTaskId f = plan_.add_flow(gpus[h], gpus[h + 1], Bytes{bytes}, phase);
        label(f, n);
        if (h == 0) {
          wait(f, after);
        } else {
          plan_.add_dependency(last_on_hop[h - 1], f);  // this piece, one hop back
        }
        if (p > 0) {
          plan_.add_dependency(last_on_hop[h], f);  // the piece before, on this hop
        }
        last_on_hop[h] = f;
      }
    }
    return last_on_hop;
  }

  PlanTaskId add_node_delay(NodeRef ref, std::span<const PlanTaskId> after) {
    const PlanTaskId t = plan_.add_delay(job_.gpu_of(ref.rank), Time{}, main_);
    label(t, node(ref));
    wait(t, after);
    return t;
  }

  // A send and its recv: one flow after both sides' dependencies, paying its route's latency;
  // a pair of no bytes only orders the two sides.
  PlanTaskId add_pair(const ReplayUnit& unit, std::span<const PlanTaskId> after) {
    const NodeRef send = unit.members[0];
    const NodeRef recv = unit.members[1];
    const EtNode& n = node(send);
    if (n.comm_bytes == 0) {
      return add_node_delay(recv, after);
    }
    const PlanTaskId t = plan_.add_flow(job_.gpu_of(send.rank), job_.gpu_of(recv.rank),
                                        Bytes{n.comm_bytes},
                                        plan_.phase(PhaseKind::SendRecv, PhasePass::Fwd));
    label(t, n);
    wait(t, after);
    return t;
  }
};

}  // namespace

std::vector<Case> ChakraJob::cases(const BuildEnv& env) const {
  const std::variant<Replay, Problem> replay = match_trace(*this);
  HOPSIM_ASSERT(std::holds_alternative<Replay>(replay), "a chakra trace that check() refused");
  std::vector<Case> out;
  Case one{"", TracePlan(*this, env).build(std::get<Replay>(replay))};
  one.choice = std::string(kTraceComputeNames[static_cast<std::size_t>(compute)]);
  out.push_back(std::move(one));
  return out;
}

}  // namespace hopsim::work
