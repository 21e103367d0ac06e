// Plans written as Chakra nodes, rank by rank.
#include "workloads/trace/plan_export.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "workloads/plan/runner.hpp"

namespace hopsim::work {
namespace {

constexpr std::size_t kNameChars = 120;

class Exporter {
 public:
  Exporter(const Plan& plan, const ComputeSpeeds* speeds) : plan_(plan), speeds_(speeds) {
    std::vector<topo::GpuId> gpus;
    for (const PlanTask& t : plan.tasks()) {
      gpus.push_back(t.src);
      if (t.kind == PlanTaskKind::Flow) {
        gpus.push_back(t.dst);
      }
    }
    std::sort(gpus.begin(), gpus.end());
    gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
    for (const topo::GpuId g : gpus) {
      out_.gpus.push_back(g.value());
    }
    out_.trace.ranks.resize(gpus.size());
    for (std::size_t r = 0; r < gpus.size(); ++r) {
      rank_of_[gpus[r]] = static_cast<int>(r);
    }
    next_id_ = plan.tasks().size() + 1;
    at_src_.resize(plan.tasks().size());
    at_dst_.resize(plan.tasks().size());
  }

  ExportedPlan run() {
    const auto& tasks = plan_.tasks();
    for (PlanTaskId t = 0; t < tasks.size(); ++t) {
      add_task(t);
    }
    for (const auto& [before, task] : plan_.dependencies()) {
      add_dependency(before, task);
    }
    add_stream_order();
    return std::move(out_);
  }

 private:
  const Plan& plan_;
  const ComputeSpeeds* speeds_;
  ExportedPlan out_;
  std::map<topo::GpuId, int> rank_of_;
  std::uint64_t next_id_ = 0;  ///< ids past the tasks' (task t is node t + 1 on its ranks)
  std::int64_t next_tag_ = 0;

  /// Where task t's node is in its sender's file, and in its receiver's (flows).
  std::vector<std::uint32_t> at_src_;
  std::vector<std::uint32_t> at_dst_;

  std::uint32_t add(int rank, EtNode n) {
    auto& nodes = out_.trace.ranks[static_cast<std::size_t>(rank)].nodes;
    nodes.push_back(std::move(n));
    return static_cast<std::uint32_t>(nodes.size() - 1);
  }
  std::string name_of(const PlanTask& t) const {
    const std::string& label = plan_.label(t);
    const Phase& phase = plan_.phases()[t.phase];
    return fmt::format("{}.{}{}{}", phase.name(), phase.pass(), label.empty() ? "" : " ",
                       std::string_view(label).substr(0, kNameChars));
  }

  void add_task(PlanTaskId id) {
    const PlanTask& t = plan_.tasks()[id];
    EtNode n;
    n.id = id + 1;
    n.name = name_of(t);
    const int src = rank_of_.at(t.src);
    switch (t.kind) {
      case PlanTaskKind::Compute:
      case PlanTaskKind::Hold:
        n.duration = time_on_gpu(speeds_, t, id);
        n.stream = t.stream;
        n.flops = t.flops.n;
        break;
      case PlanTaskKind::Delay:
        n.type = t.duration == Time{} ? EtNodeType::Metadata : EtNodeType::Compute;
        n.duration = t.duration;
        n.cpu = true;
        break;
      case PlanTaskKind::Flow: {
        n.type = EtNodeType::Send;
        n.peer = rank_of_.at(t.dst);
        n.comm_bytes = static_cast<std::int64_t>(
            std::ceil(static_cast<double>(t.bytes.n) / t.efficiency));
        n.tag = next_tag_++;
        EtNode recv = n;
        recv.type = EtNodeType::Recv;
        recv.peer = src;
        at_dst_[id] = add(n.peer, std::move(recv));
        break;
      }
    }
    if (t.not_before > Time{}) {  // a host op of that long, first
      EtNode wait;
      wait.id = next_id_++;
      wait.name = "not_before";
      wait.cpu = true;
      wait.duration = t.not_before;
      n.deps.push_back(wait.id);
      add(src, std::move(wait));
    }
    at_src_[id] = add(src, std::move(n));
  }

  // The ranks that hold a task's node (a flow: sender, then receiver).
  std::vector<int> holders(const PlanTask& t) const {
    std::vector<int> out{rank_of_.at(t.src)};
    if (t.kind == PlanTaskKind::Flow) {
      out.push_back(rank_of_.at(t.dst));
    }
    return out;
  }
  EtNode& node_of(PlanTaskId id, int rank) {
    const PlanTask& t = plan_.tasks()[id];
    const std::uint32_t at = rank == rank_of_.at(t.src) ? at_src_[id] : at_dst_[id];
    return out_.trace.ranks[static_cast<std::size_t>(rank)].nodes[at];
  }

  // On a rank that holds both tasks' nodes (the task's sender first); else through a message
  // of no bytes from the rank where `before` ends last (a flow's receiver) to the task's.
  // A stream runs its kernels in issue order: each waits for the one issued before it on its
  // GPU's stream, which the trace says as a dependency (a replay, or ASTRA-sim, may otherwise
  // start a later kernel first).
  void add_stream_order() {
    std::map<std::pair<topo::GpuId, StreamIndex>, PlanTaskId> last;
    const auto& tasks = plan_.tasks();
    for (PlanTaskId t = 0; t < tasks.size(); ++t) {
      if (tasks[t].kind != PlanTaskKind::Compute && tasks[t].kind != PlanTaskKind::Hold) {
        continue;
      }
      const auto [it, first] = last.try_emplace({tasks[t].src, tasks[t].stream}, t);
      if (!first) {
        node_of(t, rank_of_.at(tasks[t].src)).deps.push_back(it->second + 1);
        it->second = t;
      }
    }
  }

  void add_dependency(PlanTaskId before, PlanTaskId task) {
    const std::vector<int> from = holders(plan_.tasks()[before]);
    const std::vector<int> to = holders(plan_.tasks()[task]);
    for (const int r : to) {
      if (std::find(from.begin(), from.end(), r) != from.end()) {
        node_of(task, r).deps.push_back(before + 1);
        return;
      }
    }
    EtNode send;
    send.id = next_id_++;
    send.name = "order";
    send.type = EtNodeType::Send;
    send.peer = to.front();
    send.tag = next_tag_++;
    send.deps = {before + 1};
    EtNode recv = send;
    recv.id = next_id_++;
    recv.type = EtNodeType::Recv;
    recv.peer = from.back();
    recv.deps.clear();
    node_of(task, to.front()).deps.push_back(recv.id);
    add(from.back(), std::move(send));
    add(to.front(), std::move(recv));
  }
};

}  // namespace

ExportedPlan export_plan(const Plan& plan, const ComputeSpeeds* speeds) {
  return Exporter(plan, speeds).run();
}

}  // namespace hopsim::work
