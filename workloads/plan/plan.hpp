// A plan: the task graph a workload builds (flows between GPUs, compute on GPU streams,
// dependencies), with what reports and traces need (labels, phases, streams, FLOPs, sources).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/units.hpp"
#include "topology/cluster.hpp"
#include "workloads/compute/kernel_class.hpp"
#include "workloads/compute/source.hpp"

namespace hopsim::work {

using PlanTaskId = std::uint32_t;
/// A stream of every GPU, by index in Plan::streams(): 0 "compute" and 1 "comm" always exist.
using StreamIndex = std::uint16_t;
inline constexpr StreamIndex kComputeStream = 0;
inline constexpr StreamIndex kCommStream = 1;

/// Flow: bytes between GPUs over links. Compute: a kernel on a GPU's stream. Delay: time that
/// holds nothing. Hold: communication measured elsewhere, as a fixed time on a GPU's stream (a
/// folded step's gradient bucket): it holds the stream and counts as communication.
enum class PlanTaskKind : std::uint8_t { Flow, Compute, Delay, Hold };

struct PlanTask {
  PlanTaskKind kind = PlanTaskKind::Flow;
  StreamIndex stream = kCommStream;
  std::uint32_t phase = 0;
  std::uint32_t label = 0;  ///< index into Plan::labels(); 0 is "" (no label)
  topo::GpuId src;          ///< the GPU that sends (flow) or computes (compute, delay)
  topo::GpuId dst;          ///< the GPU that receives (flow)
  Bytes bytes;
  Time duration;    ///< compute or delay: how long it takes
  Time not_before;  ///< earliest start
  /// A flow pays this latency instead of its route's (collectives follow NCCL's cost model).
  std::optional<Time> latency;
  Flops flops;                              ///< compute: the work it does
  Source source = Source::Roofline;         ///< compute: where its time came from
  KernelClass kernel = KernelClass::Other;  ///< compute: its class
  /// Flow: payload bytes per byte on the wire (a protocol's flags, a kernel that reaches only a
  /// share of the links); the flow moves bytes / efficiency, reports count `bytes`.
  double efficiency = 1.0;
  /// Flow: through the NICs alone (topo::Cluster::nic_route), as RDMA without NVLink
  /// forwarding goes, even inside a node; else the topology's route. A kind of route, not a
  /// list of links, so that a plan can move to other GPUs (Plan::append).
  bool nics_only = false;
};

/// What a phase is: the kinds of work a report groups tasks by. Main is the one phase of a
/// plan that names none.
enum class PhaseKind : std::uint8_t {
  Main,
  Flows,
  SendRecv,
  AllGather,
  ReduceScatter,
  AllReduce,
  AllToAll,
  TpComm,
  Projections,
  Attention,
  Mlp,
  Router,
  Dispatch,
  Experts,
  SharedExperts,
  Combine,
  Head,
  Join,
  Pipeline,
  PpComm,
  DpComm,
  ParamGather,
  Optimizer,
  Request,       ///< a prefill request's fixed cost (the serving stack's, not its layers')
  Broadcast,     ///< a replayed trace's broadcast
  StepOverhead,  ///< a training step's fixed cost (the framework's, not its layers' or optimizer's)
};
/// When in a step a phase runs: forward, backward, a deferred weight-gradient part, an overlapped
/// forward-backward pair, the step's end.
enum class PhasePass : std::uint8_t { Fwd, Bwd, Weight, Pair, Step };

/// Its name in reports and traces ("tp_comm", "dispatch", ...); "fwd", "bwd", ...
std::string_view phase_name(PhaseKind kind);
std::string_view pass_name(PhasePass pass);
/// What a layer phase's exposed communication counts as: "tp", "cp" (attention's ring), "ep"
/// (dispatch and combine) or "other".
std::string_view exposed_as(PhaseKind kind);

/// Phases group tasks for the report (dispatch forward, attention backward, ...).
struct Phase {
  PhaseKind kind = PhaseKind::Main;
  PhasePass when = PhasePass::Fwd;

  std::string_view name() const { return phase_name(kind); }

  std::string_view pass() const { return pass_name(when); }
};

/// One compute kernel on one GPU's stream.
struct ComputeTask {
  topo::GpuId gpu;
  Time duration{};
  Flops flops{};
  Source source = Source::Roofline;
  std::uint32_t phase = 0;
  StreamIndex stream = kComputeStream;
  std::string_view label{};
  KernelClass kind = KernelClass::Other;
};

/// SMs that communication kernels hold on a GPU while an exchange (a dispatch or combine phase's
/// flows and fixed costs) runs there: a compute kernel beside one runs on the others
/// (workloads/plan/sm_sharing.hpp). `held` 0: none held.
struct SmShare {
  std::int64_t held = 0;
  std::int64_t sms = 0;  ///< the GPU's SMs
  bool operator==(const SmShare&) const = default;
};

/// Data, not behaviour: workloads and collectives append to it; the runner executes it.
/// Compute tasks on one GPU's stream run one at a time in the order they were added; flows
/// run concurrently and share links (their stream says who issued them).
class Plan {
 public:
  Plan();

  /// The phase of that kind and pass, added the first time it is asked for (the first one
  /// asked for replaces Main while the plan has no task).
  std::uint32_t phase(PhaseKind kind, PhasePass pass);
  /// A stream of every GPU (a CUDA stream); returns its index. Names are unique.
  StreamIndex add_stream(std::string_view name);
  PlanTaskId add_flow(topo::GpuId src, topo::GpuId dst, Bytes bytes, std::uint32_t phase = 0);
  PlanTaskId add_compute(const ComputeTask& task);
  /// A compute task of `duration` with no FLOP count (a fixed-time kernel).
  PlanTaskId add_compute(topo::GpuId gpu, Time duration, std::uint32_t phase = 0);
  /// A fixed delay that holds no resource (a collective's launch latency, say).
  PlanTaskId add_delay(topo::GpuId gpu, Time duration, std::uint32_t phase = 0);
  /// Communication of `duration`, measured elsewhere, holding `stream` of `gpu` (Hold).
  PlanTaskId add_hold(topo::GpuId gpu, Time duration, std::uint32_t phase, StreamIndex stream);
  /// The stream of that name, added the first time it is asked for.
  StreamIndex stream(std::string_view name);

  void set_latency(PlanTaskId flow, Time latency) { tasks_[flow].latency = latency; }

  /// Payload per wire byte of a flow, in (0, 1].
  void set_efficiency(PlanTaskId flow, double efficiency);
  /// A flow takes these links instead of the topology's route from src to dst.
  /// The flow goes through the NICs alone (PlanTask::nics_only).
  void set_nics_only(PlanTaskId flow);

  void set_label(PlanTaskId task, std::string_view label) { tasks_[task].label = intern(label); }

  void set_stream(PlanTaskId task, StreamIndex stream);

  /// `task` starts after `before` ends.
  void add_dependency(PlanTaskId before, PlanTaskId task) { deps_.emplace_back(before, task); }

  void set_not_before(PlanTaskId task, Time at) { tasks_[task].not_before = at; }

  /// Copies every task and dependency of `other` into this plan, GPU g of `other` becoming
  /// gpu_of[g], phases matched by kind and pass and streams by name (added when missing); returns
  /// the id of the first copied task (task i of `other` is that + i).
  PlanTaskId append(const Plan& other, std::span<const topo::GpuId> gpu_of);

  /// Every compute task of GPU g takes its duration / speed[g][its class], rounded up, as the
  /// runner runs a perturbed GPU's kernels: a plan simulated without speeds then stands for slow
  /// GPUs or another GPU model (speed[g] read from ComputeSpeeds::speeds for the GPU that plan
  /// GPU g stands for).
  void slow_compute(std::span<const KernelSpeeds> speed);
  /// Compute task i takes durations[i] where that is not zero (one entry per task).
  void set_durations(std::span<const Time> durations);
  /// Its exchanges hold `share.held` of `share.sms` SMs (set once; a plan appended keeps it).
  void share_sms(SmShare share);
  const SmShare& sm_share() const { return sm_share_; }
  /// The tasks that `keep` marks (one flag per task), as a plan of their own with this plan's
  /// phases, streams and labels: each kept task waits for the kept tasks it waited for,
  /// directly or through tasks left out, or (`dependencies` false) for none but those before
  /// it on its stream (plan_subset.cpp).
  Plan subset(std::span<const char> keep, bool dependencies = true) const;

  const std::vector<PlanTask>& tasks() const { return tasks_; }

  const std::vector<std::pair<PlanTaskId, PlanTaskId>>& dependencies() const { return deps_; }

  const std::vector<Phase>& phases() const { return phases_; }

  const std::vector<std::string>& streams() const { return streams_; }

  const std::vector<std::string>& labels() const { return labels_; }

  const std::string& label(const PlanTask& t) const { return labels_[t.label]; }

  void reserve(std::size_t tasks) { tasks_.reserve(tasks); }

 private:
  std::vector<PlanTask> tasks_;
  std::vector<std::pair<PlanTaskId, PlanTaskId>> deps_;
  std::vector<Phase> phases_;
  std::vector<std::string> streams_;
  std::vector<std::string> labels_;
  std::unordered_map<std::string, std::uint32_t> label_index_;
  SmShare sm_share_;

  std::uint32_t intern(std::string_view label);
};

}  // namespace hopsim::work
