// Runs a task graph: compute tasks on serial streams, transfers as flows, and dependencies.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "sim/flow_network.hpp"
#include "sim/simulator.hpp"
#include "sim/units.hpp"

namespace hopsim::sim {

using TaskId = std::uint32_t;
/// A serial execution resource (to workloads: one stream of one GPU).
using StreamId = std::uint32_t;

enum class TaskKind : std::uint8_t { Compute, Transfer, Delay };

/// When a task's dependencies were met, when it started, when it ended.
/// A transfer's start is before its latency; its end is when its last byte arrived.
struct TaskTimes {
  Time ready = Time::max();
  Time start = Time::max();
  Time end = Time::max();
};

class Executor {
 public:
  Executor(Simulator& sim, FlowNetwork& network);

  /// A compute task: runs `duration` on `stream`. A stream runs one task at a time, in the
  /// order they were added (issue order, as kernels on a CUDA stream): a task starts once it
  /// is ready and every earlier task of its stream has ended.
  TaskId add_compute(StreamId stream, Time duration);
  /// A delay: takes `duration` and no resource (a local copy, a fixed overhead).
  TaskId add_delay(Time duration);
  /// A transfer: a flow of `size` bytes along `route` after `latency`.
  TaskId add_transfer(std::span<const ResourceId> route, Bytes size, Time latency);
  /// `task` starts only after `before` has ended.
  void add_dependency(TaskId before, TaskId task);
  /// `task` starts no earlier than `at`.
  void set_not_before(TaskId task, Time at);

  void set_on_start(std::function<void(TaskId)> cb) { on_start_ = std::move(cb); }
  void set_on_end(std::function<void(TaskId)> cb) { on_end_ = std::move(cb); }

  /// Releases the tasks without dependencies; then run the simulator. Call once.
  void launch();

  std::size_t size() const { return tasks_.size(); }
  TaskKind kind(TaskId t) const { return tasks_[t].kind; }
  const TaskTimes& times(TaskId t) const { return tasks_[t].times; }
  /// The flow of a started transfer.
  FlowId flow_of(TaskId t) const { return tasks_[t].flow; }
  std::span<const ResourceId> route(TaskId t) const;
  Bytes bytes(TaskId t) const { return tasks_[t].size; }
  Time latency(TaskId t) const { return tasks_[t].duration; }
  std::size_t tasks_done() const { return done_; }
  /// Tasks that never ran: their dependencies form a cycle or depend on one.
  std::vector<TaskId> stuck() const;

 private:
  struct Task {
    TaskKind kind = TaskKind::Compute;
    StreamId stream = 0;
    std::uint32_t route_begin = 0;
    std::uint32_t route_size = 0;
    Time duration;  // compute time, or a transfer's latency
    Bytes size;
    Time not_before;
    std::uint32_t waiting = 0;  // unfinished dependencies
    bool ready = false;         // dependencies met and not_before passed
    FlowId flow = 0;
    TaskTimes times;
  };
  struct Stream {
    bool busy = false;
    std::vector<TaskId> issued;  // its tasks in the order they were added
    std::size_t next = 0;        // the first of them not started yet
  };

  Simulator& sim_;
  FlowNetwork& network_;
  std::vector<Task> tasks_;
  std::vector<ResourceId> route_pool_;
  std::vector<std::pair<TaskId, TaskId>> edges_;  // (before, after) until launch
  std::vector<std::uint32_t> next_begin_;         // CSR of dependents, built at launch
  std::vector<TaskId> next_;
  std::vector<Stream> streams_;
  std::vector<TaskId> task_of_flow_;
  std::function<void(TaskId)> on_start_;
  std::function<void(TaskId)> on_end_;
  std::size_t done_ = 0;
  bool launched_ = false;

  void ready(TaskId t);
  void begin(TaskId t);
  void run_next(StreamId s);
  void finish(TaskId t);
};

}  // namespace hopsim::sim
