// Building plans: tasks, phases, streams, labels, routes through the NICs alone, dependencies.
#include "workloads/plan/plan.hpp"

#include <algorithm>
#include <array>

#include "sim/assert.hpp"

namespace hopsim::work {

namespace {

// Per phase kind, in enum order: its name and what its exposed communication counts as.
struct PhaseRow {
  std::string_view name;
  std::string_view exposed;
};

constexpr std::array<PhaseRow, 26> kPhases{{
    {"main", "other"},        {"flows", "other"},
    {"send_recv", "other"},   {"all_gather", "other"},
    {"reduce_scatter", "other"}, {"all_reduce", "other"},
    {"all_to_all", "other"},  {"tp_comm", "tp"},
    {"projections", "other"},  {"attention", "cp"},
    {"mlp", "other"},          {"router", "other"},
    {"dispatch", "ep"},
    {"experts", "other"},      {"shared_experts", "other"},
    {"combine", "ep"},        {"head", "other"},
    {"join", "other"},        {"pipeline", "other"},
    {"pp_comm", "other"},     {"dp_comm", "other"},
    {"param_gather", "other"}, {"optimizer", "other"},
    {"request", "other"},     {"broadcast", "other"},
    {"step_overhead", "other"},
}};
static_assert(kPhases.size() == static_cast<std::size_t>(PhaseKind::StepOverhead) + 1);

constexpr std::array<std::string_view, 5> kPasses{"fwd", "bwd", "weight", "pair", "step"};

}  // namespace

std::string_view phase_name(PhaseKind kind) { return kPhases[static_cast<std::size_t>(kind)].name; }
std::string_view pass_name(PhasePass pass) { return kPasses[static_cast<std::size_t>(pass)]; }
std::string_view exposed_as(PhaseKind kind) {
  return kPhases[static_cast<std::size_t>(kind)].exposed;
}

Plan::Plan() : phases_{Phase{}}, streams_{"compute", "comm"}, labels_{""} {
  label_index_.emplace("", 0);
}

std::uint32_t Plan::phase(PhaseKind kind, PhasePass pass) {
  for (std::size_t i = 0; i < phases_.size(); ++i) {
    if (phases_[i].kind == kind && phases_[i].when == pass) {
      return static_cast<std::uint32_t>(i);
    }
  }
  if (tasks_.empty() && phases_.size() == 1 && phases_[0].kind == PhaseKind::Main) {
    phases_.clear();  // the default phase is replaced by the first named one
  }
  phases_.push_back(Phase{kind, pass});
  return static_cast<std::uint32_t>(phases_.size() - 1);
}

StreamIndex Plan::add_stream(std::string_view name) {
  HOPSIM_ASSERT(std::find(streams_.begin(), streams_.end(), name) == streams_.end(),
                "stream \"{}\" exists already", name);
  HOPSIM_ASSERT(streams_.size() < 64, "{} streams per GPU", streams_.size() + 1);
  streams_.emplace_back(name);
  return static_cast<StreamIndex>(streams_.size() - 1);
}

PlanTaskId Plan::append(const Plan& other, std::span<const topo::GpuId> gpu_of) {
  std::vector<std::uint32_t> phase_of;
  for (const Phase& ph : other.phases_) {
    phase_of.push_back(phase(ph.kind, ph.when));
  }
  std::vector<StreamIndex> stream_of;
  for (const std::string& name : other.streams_) {
    stream_of.push_back(stream(name));
  }
  std::vector<std::uint32_t> label_of;
  for (const std::string& label : other.labels_) {
    label_of.push_back(intern(label));
  }
  if (other.sm_share_.held > 0) {
    share_sms(other.sm_share_);
  }
  const auto first = static_cast<PlanTaskId>(tasks_.size());
  tasks_.reserve(tasks_.size() + other.tasks_.size());
  for (PlanTask t : other.tasks_) {
    t.src = gpu_of[t.src.index()];
    t.dst = gpu_of[t.dst.index()];
    t.phase = phase_of[t.phase];
    t.stream = stream_of[t.stream];
    t.label = label_of[t.label];
    tasks_.push_back(t);
  }
  deps_.reserve(deps_.size() + other.deps_.size());
  for (const auto& [before, after] : other.deps_) {
    deps_.emplace_back(first + before, first + after);
  }
  return first;
}

void Plan::share_sms(SmShare share) {
  HOPSIM_ASSERT(share.held >= 0 && share.held < share.sms, "{} of {} SMs held", share.held,
                share.sms);
  HOPSIM_ASSERT(sm_share_.held == 0 || sm_share_ == share,
                "exchanges holding {} of {} SMs and {} of {} in one plan", sm_share_.held,
                sm_share_.sms, share.held, share.sms);
  sm_share_ = share;
}

void Plan::set_durations(std::span<const Time> durations) {
  HOPSIM_ASSERT(durations.size() == tasks_.size(), "{} durations for {} tasks", durations.size(),
                tasks_.size());
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    if (durations[i] > Time{} && tasks_[i].kind == PlanTaskKind::Compute) {
      tasks_[i].duration = durations[i];
    }
  }
}

void Plan::slow_compute(std::span<const KernelSpeeds> speed) {
  for (PlanTask& t : tasks_) {
    const double v = t.src.index() < speed.size()
                         ? speed[t.src.index()][static_cast<std::size_t>(t.kernel)]
                         : 1.0;
    if (t.kind == PlanTaskKind::Compute && v != 1.0) {
      HOPSIM_ASSERT(v > 0, "GPU {} at speed {}", t.src, v);
      t.duration = at_speed(t.duration, v);
    }
  }
}

std::uint32_t Plan::intern(std::string_view label) {
  const auto [it, inserted] =
      label_index_.try_emplace(std::string(label), static_cast<std::uint32_t>(labels_.size()));
  if (inserted) {
    labels_.emplace_back(label);
  }
  return it->second;
}

PlanTaskId Plan::add_flow(topo::GpuId src, topo::GpuId dst, Bytes bytes, std::uint32_t phase) {
  HOPSIM_ASSERT(bytes.n >= 0, "flow {} -> {} of {} bytes", src, dst, bytes.n);
  HOPSIM_ASSERT(phase < phases_.size(), "phase {} of {}", phase, phases_.size());
  PlanTask t;
  t.kind = PlanTaskKind::Flow;
  t.stream = kCommStream;
  t.src = src;
  t.dst = dst;
  t.bytes = bytes;
  t.phase = phase;
  tasks_.push_back(t);
  return static_cast<PlanTaskId>(tasks_.size() - 1);
}

PlanTaskId Plan::add_compute(const ComputeTask& c) {
  HOPSIM_ASSERT(c.duration >= Time{}, "compute of {} ps on gpu {}", c.duration.count_ps(), c.gpu);
  HOPSIM_ASSERT(c.phase < phases_.size(), "phase {} of {}", c.phase, phases_.size());
  HOPSIM_ASSERT(c.stream < streams_.size(), "stream {} of {}", c.stream, streams_.size());
  PlanTask t;
  t.kind = PlanTaskKind::Compute;
  t.stream = c.stream;
  t.src = c.gpu;
  t.dst = c.gpu;
  t.duration = c.duration;
  t.phase = c.phase;
  t.flops = c.flops;
  t.source = c.source;
  t.kernel = c.kind;
  t.label = intern(c.label);
  tasks_.push_back(t);
  return static_cast<PlanTaskId>(tasks_.size() - 1);
}

PlanTaskId Plan::add_compute(topo::GpuId gpu, Time duration, std::uint32_t phase) {
  return add_compute(ComputeTask{.gpu = gpu, .duration = duration, .phase = phase});
}

PlanTaskId Plan::add_delay(topo::GpuId gpu, Time duration, std::uint32_t phase) {
  const PlanTaskId id = add_compute(gpu, duration, phase);
  tasks_[id].kind = PlanTaskKind::Delay;
  return id;
}

PlanTaskId Plan::add_hold(topo::GpuId gpu, Time duration, std::uint32_t phase, StreamIndex stream) {
  const PlanTaskId id =
      add_compute(ComputeTask{.gpu = gpu, .duration = duration, .phase = phase, .stream = stream});
  tasks_[id].kind = PlanTaskKind::Hold;
  return id;
}

StreamIndex Plan::stream(std::string_view name) {
  const auto it = std::find(streams_.begin(), streams_.end(), name);
  return it != streams_.end() ? static_cast<StreamIndex>(it - streams_.begin()) : add_stream(name);
}

void Plan::set_nics_only(PlanTaskId flow) {
  HOPSIM_ASSERT(tasks_[flow].kind == PlanTaskKind::Flow, "task {} is not a flow", flow);
  tasks_[flow].nics_only = true;
}

void Plan::set_efficiency(PlanTaskId flow, double efficiency) {
  HOPSIM_ASSERT(efficiency > 0 && efficiency <= 1, "flow efficiency {}", efficiency);
  tasks_[flow].efficiency = efficiency;
}

void Plan::set_stream(PlanTaskId task, StreamIndex stream) {
  HOPSIM_ASSERT(stream < streams_.size(), "stream {} of {}", stream, streams_.size());
  tasks_[task].stream = stream;
}

}  // namespace hopsim::work
