// Building plans: tasks, phases, dependencies.
#include "workloads/plan/plan.hpp"

#include "sim/assert.hpp"

namespace hopsim::work {

std::uint32_t Plan::add_phase(std::string name, std::string pass) {
  if (tasks_.empty() && phases_.size() == 1 && phases_[0].name == "main") {
    phases_.clear();  // the default phase is replaced by the first named one
  }
  phases_.push_back(Phase{std::move(name), std::move(pass)});
  return static_cast<std::uint32_t>(phases_.size() - 1);
}

PlanTaskId Plan::add_flow(int src, int dst, Bytes bytes, std::uint32_t phase) {
  HOPSIM_ASSERT(bytes.n >= 0, "flow {} -> {} of {} bytes", src, dst, bytes.n);
  HOPSIM_ASSERT(phase < phases_.size(), "phase {} of {}", phase, phases_.size());
  PlanTask t;
  t.kind = PlanTaskKind::Flow;
  t.src = src;
  t.dst = dst;
  t.bytes = bytes;
  t.phase = phase;
  tasks_.push_back(t);
  return static_cast<PlanTaskId>(tasks_.size() - 1);
}

PlanTaskId Plan::add_compute(int gpu, Time duration, std::uint32_t phase) {
  HOPSIM_ASSERT(duration >= Time{}, "compute of {} ps on gpu {}", duration.count_ps(), gpu);
  HOPSIM_ASSERT(phase < phases_.size(), "phase {} of {}", phase, phases_.size());
  PlanTask t;
  t.kind = PlanTaskKind::Compute;
  t.src = gpu;
  t.dst = gpu;
  t.duration = duration;
  t.phase = phase;
  tasks_.push_back(t);
  return static_cast<PlanTaskId>(tasks_.size() - 1);
}

}  // namespace hopsim::work

namespace hopsim::work {

PlanTaskId Plan::add_delay(int gpu, Time duration, std::uint32_t phase) {
  const PlanTaskId id = add_compute(gpu, duration, phase);
  tasks_[id].kind = PlanTaskKind::Delay;
  return id;
}

}  // namespace hopsim::work
