// Max-min fair sharing of link bandwidth among flows (a fluid model), updated incrementally.
//
// Model (SimGrid's fluid network model, solved with progressive filling):
//   Resources l have capacities C_l (bytes/s). An active flow f crosses the resources of its
//   route R_f and moves at rate r_f. The rates are the max-min fair allocation:
//       sum_{f : l in R_f} r_f <= C_l  for every l,
//   and no r_f can grow without shrinking some r_g <= r_f. Progressive filling computes it:
//   raise every unfixed rate together; when a resource saturates, fix the rates of its flows
//   at its fair share  s_l = (C_l - fixed load on l) / (number of unfixed flows on l).
//   Shares only grow as flows are fixed elsewhere, so the resource with the smallest share is
//   always the next to saturate: a heap with lazy re-insertion finds it.
//
// Flow classes: flows with identical routes get identical rates, so they share one solver
//   variable of weight n_c (their count). Each class keeps W_c, the bytes moved per flow since
//   the class was created (the integral of its rate); flow f finishes when W_c reaches
//   W_c(join_f) + size_f. A class's flows sit in a heap by that target, so a rate change
//   touches one number per class, not one per flow.
//
// Incremental updates: flows join (after their latency) and leave at event times. All changes
//   at one instant form a batch; the rates of the connected region of the class/resource graph
//   that the batch touched are re-solved, and nothing else (max-min allocations of disjoint
//   regions are independent).
//
// Completion: a flow is complete when its remaining bytes are at most what it moves in one
//   picosecond. Finish times are rounded up to whole picoseconds.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/resource.hpp"
#include "sim/simulator.hpp"
#include "sim/units.hpp"

namespace hopsim::sim {

using FlowId = std::uint32_t;

class FlowNetwork {
 public:
  using FinishCallback = std::function<void(FlowId)>;

  /// One resource per capacity, each > 0. The network schedules its own events on `sim`.
  FlowNetwork(Simulator& sim, std::vector<Bandwidth> capacities);

  /// Called at the instant each flow finishes (after its bytes have moved).
  void set_on_finish(FinishCallback cb) { on_finish_ = std::move(cb); }
  /// Called after every re-solve, for observers that check rates (tests, tracers).
  void set_on_solve(std::function<void()> cb) { on_solve_ = std::move(cb); }

  /// Starts a flow now: it waits `latency`, then moves `size` bytes along `route`
  /// (a non-empty list of resources). Ids are dense, in start order from 0.
  FlowId start(std::span<const ResourceId> route, Bytes size, Time latency);

  std::size_t resource_count() const { return capacity_.size(); }
  Bandwidth capacity(ResourceId r) const { return {capacity_[r]}; }
  /// True while a flow is past its latency and still has bytes to move.
  bool moving(FlowId f) const { return flows_[f].state == Flow::State::Active; }
  /// Current rate of a flow that is moving bytes; 0 before it joins and after it finishes.
  double rate_bytes_per_s(FlowId f) const;
  /// Sum of the current rates of the flows crossing `r`.
  double load_bytes_per_s(ResourceId r) const;
  /// Bytes `f` still has to move (its size before it joins, 0 once finished).
  double remaining_bytes(FlowId f) const;

  std::uint64_t flows_started() const { return flows_.size(); }
  std::uint64_t solves() const { return solves_; }
  std::uint64_t classes_solved() const { return classes_solved_; }

 private:
  using ClassId = std::uint32_t;
  static constexpr ClassId kNoClass = ~ClassId{0};

  struct Flow {
    ClassId cls;
    double target;  // class work at which this flow is done; valid once joined
    Bytes size;
    enum class State : std::uint8_t { Latency, Active, Done } state;
  };
  struct Class {
    std::uint32_t route_begin = 0;  // into route_pool_ / route_pos_
    std::uint32_t route_size = 0;
    std::uint32_t active = 0;   // n_c
    std::uint32_t version = 0;  // bumps when its completion entry goes stale
    double rate = 0;            // per flow, bytes/s
    double work = 0;            // W_c at work_time
    bool head_changed = false;  // its earliest-finishing flow changed since it was scheduled
    Time work_time;
    std::vector<std::pair<double, FlowId>> pending;  // min-heap by target
  };
  struct Completion {
    Time at;
    ClassId cls;
    std::uint32_t version;
    bool operator>(const Completion& o) const {
      return at != o.at ? at > o.at : cls > o.cls;
    }
  };
  struct RouteHash {
    const std::vector<ResourceId>* pool;
    std::size_t operator()(const std::pair<std::uint32_t, std::uint32_t>& key) const;
  };
  struct RouteEq {
    const std::vector<ResourceId>* pool;
    bool operator()(const std::pair<std::uint32_t, std::uint32_t>& a,
                    const std::pair<std::uint32_t, std::uint32_t>& b) const;
  };

  Simulator& sim_;
  std::vector<double> capacity_;
  std::vector<std::vector<ClassId>> on_resource_;  // active classes per resource
  std::vector<ResourceId> route_pool_;
  std::vector<std::uint32_t> route_pos_;  // index of the class in on_resource_[route link]
  std::vector<Class> classes_;
  std::vector<Flow> flows_;
  std::unordered_map<std::pair<std::uint32_t, std::uint32_t>, ClassId, RouteHash, RouteEq>
      class_of_route_;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  std::vector<ResourceId> dirty_;
  std::vector<std::uint32_t> dirty_stamp_;  // per resource: == epoch_ when in dirty_
  FinishCallback on_finish_;
  std::function<void()> on_solve_;
  EventId wake_;
  Time wake_at_ = Time::max();
  std::uint32_t epoch_ = 1;        // region membership stamps
  std::uint32_t dirty_epoch_ = 1;  // dirty_stamp_ generation
  bool in_wake_ = false;
  std::uint64_t solves_ = 0;
  std::uint64_t classes_solved_ = 0;

  // Solver scratch, sized once per resource / class and reused by every solve.
  std::vector<std::uint32_t> res_seen_;
  std::vector<std::uint32_t> cls_seen_;
  std::vector<std::uint32_t> cls_fixed_;
  std::vector<double> res_left_;
  std::vector<double> res_weight_;
  std::vector<ResourceId> region_res_;
  std::vector<ClassId> region_cls_;
  std::vector<double> old_rate_;
  std::vector<std::pair<double, ResourceId>> share_heap_;
  std::vector<Completion> due_;
  std::vector<FlowId> finished_;

  ClassId intern(std::span<const ResourceId> route);
  void join(FlowId f);
  void activate(ClassId id);
  void deactivate(ClassId id);
  void settle(Class& c) const;
  void finish_zero_byte(FlowId f);
  void mark_dirty(ClassId id);
  void arm();
  void wake();
  void collect_finished();
  void solve_dirty();
  void collect_region(ResourceId seed);
  void fill_region();
  void schedule_completion(ClassId id);
  std::span<const ResourceId> route_of(const Class& c) const {
    return {route_pool_.data() + c.route_begin, c.route_size};
  }
};

}  // namespace hopsim::sim
