// Task-graph execution: dependency counting, streams in issue order, transfers as flows.
#include "sim/executor.hpp"

#include "sim/assert.hpp"

namespace hopsim::sim {

Executor::Executor(Simulator& sim, FlowNetwork& network) : sim_(sim), network_(network) {
  network_.set_on_finish([this](FlowId f) {
    HOPSIM_ASSERT(f < task_of_flow_.size(), "flow {} finished but no task started it", f);
    finish(task_of_flow_[f]);
  });
}

TaskId Executor::add_compute(StreamId stream, Time duration) {
  HOPSIM_ASSERT(!launched_, "task added after launch");
  HOPSIM_ASSERT(duration >= Time{}, "compute task with negative duration {} ps",
                duration.count_ps());
  Task task;
  task.kind = TaskKind::Compute;
  task.stream = stream;
  task.duration = duration;
  tasks_.push_back(task);
  if (stream >= streams_.size()) {
    streams_.resize(stream + std::size_t{1});
  }
  const auto id = static_cast<TaskId>(tasks_.size() - 1);
  streams_[stream].issued.push_back(id);
  return id;
}

TaskId Executor::add_delay(Time duration) {
  HOPSIM_ASSERT(!launched_, "task added after launch");
  HOPSIM_ASSERT(duration >= Time{}, "delay of {} ps", duration.count_ps());
  Task task;
  task.kind = TaskKind::Delay;
  task.duration = duration;
  tasks_.push_back(task);
  return static_cast<TaskId>(tasks_.size() - 1);
}

TaskId Executor::add_transfer(std::span<const ResourceId> route, Bytes size, Time latency) {
  HOPSIM_ASSERT(!launched_, "task added after launch");
  Task task;
  task.kind = TaskKind::Transfer;
  task.route_begin = static_cast<std::uint32_t>(route_pool_.size());
  task.route_size = static_cast<std::uint32_t>(route.size());
  task.duration = latency;
  task.size = size;
  route_pool_.insert(route_pool_.end(), route.begin(), route.end());
  tasks_.push_back(task);
  return static_cast<TaskId>(tasks_.size() - 1);
}

void Executor::add_dependency(TaskId before, TaskId task) {
  HOPSIM_ASSERT(before < tasks_.size() && task < tasks_.size(), "dependency {} -> {} of {} tasks",
                before, task, tasks_.size());
  edges_.emplace_back(before, task);
  ++tasks_[task].waiting;
}

void Executor::set_not_before(TaskId task, Time at) {
  tasks_[task].not_before = at;
}

std::span<const ResourceId> Executor::route(TaskId t) const {
  return {route_pool_.data() + tasks_[t].route_begin, tasks_[t].route_size};
}

void Executor::launch() {
  HOPSIM_ASSERT(!launched_, "launch() called twice");
  launched_ = true;
  next_begin_.assign(tasks_.size() + 1, 0);
  for (const auto& [before, after] : edges_) {
    ++next_begin_[before + 1];
  }
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    next_begin_[i + 1] += next_begin_[i];
  }
  next_.resize(edges_.size());
  std::vector<std::uint32_t> fill(next_begin_.begin(), next_begin_.end() - 1);
  for (const auto& [before, after] : edges_) {
    next_[fill[before]++] = after;
  }
  edges_ = {};
  for (TaskId t = 0; t < tasks_.size(); ++t) {
    if (tasks_[t].waiting == 0) {
      ready(t);
    }
  }
}

void Executor::ready(TaskId t) {
  Task& task = tasks_[t];
  if (task.not_before > sim_.now()) {
    sim_.schedule_at(task.not_before, [this, t] { ready(t); });
    return;
  }
  task.times.ready = sim_.now();
  task.ready = true;
  if (task.kind != TaskKind::Compute) {
    begin(t);
    return;
  }
  run_next(task.stream);
}

void Executor::run_next(StreamId s) {
  Stream& stream = streams_[s];
  if (stream.busy || stream.next == stream.issued.size() ||
      !tasks_[stream.issued[stream.next]].ready) {
    return;
  }
  const TaskId t = stream.issued[stream.next++];
  stream.busy = true;
  begin(t);
}

void Executor::begin(TaskId t) {
  Task& task = tasks_[t];
  task.times.start = sim_.now();
  if (on_start_) {
    on_start_(t);
  }
  if (task.kind != TaskKind::Transfer) {
    sim_.schedule_in(task.duration, [this, t] { finish(t); });
    return;
  }
  const FlowId f = network_.start(route(t), task.size, task.duration);
  task.flow = f;
  if (f >= task_of_flow_.size()) {
    task_of_flow_.resize(f + std::size_t{1});
  }
  task_of_flow_[f] = t;
}

void Executor::finish(TaskId t) {
  Task& task = tasks_[t];
  task.times.end = sim_.now();
  ++done_;
  if (on_end_) {
    on_end_(t);
  }
  for (std::uint32_t i = next_begin_[t]; i < next_begin_[t + 1]; ++i) {
    const TaskId n = next_[i];
    if (--tasks_[n].waiting == 0) {
      ready(n);
    }
  }
  if (task.kind == TaskKind::Compute) {
    streams_[task.stream].busy = false;
    run_next(task.stream);
  }
}

std::vector<TaskId> Executor::stuck() const {
  std::vector<TaskId> out;
  for (TaskId t = 0; t < tasks_.size(); ++t) {
    if (tasks_[t].times.end == Time::max()) {
      out.push_back(t);
    }
  }
  return out;
}

}  // namespace hopsim::sim
