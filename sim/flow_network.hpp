// Max-min fair sharing of link bandwidth among flows (a fluid model), updated incrementally.
//
// Model (SimGrid's fluid network model, solved with progressive filling):
//   Resources l have capacities C_l (bytes/s). An active flow f crosses the resources of its
//   route R_f and moves at rate r_f. The rates are the max-min fair allocation:
//       sum_{f : l in R_f} r_f <= C_l  for every l,
//   and no r_f can grow without shrinking some r_g <= r_f. Progressive filling computes it:
//   raise every unfixed rate together; when a resource saturates, fix the rates of its flows
//   at its fair share  s_l = (C_l - fixed load on l) / (number of unfixed flows on l). A
//   flow's rate is its level; each resource on its route saturates at a level >= it, or never.
//
// Classes and groups: flows with identical routes form a class; classes that cross the same
//   *tight* links (below) form a group: one solver variable of weight n_g, one rate. A group
//   keeps W_g, the bytes moved per flow; a flow is done when its class's work (W_g + offset)
//   reaches its join work + its size.
//
// Tight links (exact): a link below capacity limits nobody, so leaving it out of the problem
//   does not change the max-min allocation while that allocation fits its capacity. Only tight
//   links enter a solve; every other link is checked after it (its load kept, or bounded by a
//   cover of tight links whose capacities sum to at most its own), and one that would be
//   overloaded becomes tight and the solve is redone. A tight link that solves leave below half
//   its capacity stops being tight; groups that then share their tight links merge. (In an
//   all-to-all the NVLinks stop being tight after the intra-node flows: the rails separate.)
//
// Incremental solve (exact): when flows of a group with rate r leave, every link on its
//   route saturates at a level >= r, so below r the filling sees the same links saturate at
//   the same levels: every group with rate < r keeps it. When flows join, nothing changes
//   below the level at which a link they cross now saturates (solved exactly from the link's
//   sorted list) nor below the old rate of a group that grew. With theta the lowest such level
//   of a batch of changes, the groups with rate < theta are frozen, and the new rates are the
//   progressive filling, on what the frozen groups leave, of the groups at or above theta
//   connected to a change through tight links. Each tight link keeps its groups sorted by rate
//   with the load below each entry, so that set and its residual capacities are found in time
//   proportional to its size; the re-filled groups, fixed in increasing rate order, become the
//   new top of each list. Groups within 1e-9 of theta are re-filled too (always safe). Nothing
//   is approximated: tests check finish times against a per-flow reference to 1e-9.
//
// Completion: a flow is complete when at most a picosecond's worth of bytes remain; finish
//   times round up to whole picoseconds (an indexed heap holds each group's earliest).
// Approximate mode (set_tolerance(t), off by default): a flow finishes within t of its size
//   of its end at the rates it was given, either way: flows ending close together finish in
//   one batch (one re-solve); a completion entry stays put while its rate is within t/2 of the
//   one it used. A flow within reach of its end at a wake ends there only if its end is nearer
//   that wake than the next one due, so that about as many flows end late as early.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "sim/fair_share.hpp"
#include "sim/group_heads.hpp"
#include "sim/indexed_heap.hpp"
#include "sim/simulator.hpp"

namespace hopsim::sim {

class FlowNetwork {
 public:
  using FinishCallback = std::function<void(FlowId)>;

  /// One resource per capacity, each > 0. The network schedules its own events on `sim`.
  FlowNetwork(Simulator& sim, std::vector<Bandwidth> capacities);

  /// Called at the instant each flow finishes (after its bytes have moved).
  void set_on_finish(FinishCallback cb);
  /// Called after every re-solve, for observers that check rates (tests, tracers).
  void set_on_solve(std::function<void()> cb);
  /// Approximate mode: a flow may finish within `relative` of its size of its end (0: exact).
  void set_tolerance(double relative);
  double tolerance() const;

  /// Starts a flow now: it waits `latency`, then moves `size` bytes along `route`
  /// (a non-empty list of resources). Ids are dense, in start order from 0.
  FlowId start(std::span<const ResourceId> route, Bytes size, Time latency);

  std::size_t resource_count() const;
  Bandwidth capacity(ResourceId r) const;

  /// True while a flow is past its latency and still has bytes to move.
  bool moving(FlowId f) const { return flows_[f].state == Flow::State::Active; }

  /// Current rate of a flow that is moving bytes; 0 before it joins and after it finishes.
  double rate_bytes_per_s(FlowId f) const;

  /// Sum of the current rates of the flows crossing `r`.
  double load_bytes_per_s(ResourceId r) const;

  /// Bytes `f` still has to move (its size before it joins, 0 once finished).
  double remaining_bytes(FlowId f) const;

  std::uint64_t flows_started() const;
  std::uint64_t solves() const;
  /// Solver variables (groups of flows) re-filled, summed over all solves.
  std::uint64_t classes_solved() const;
  /// The solver's counters (promotions, demotions, merges, ...).
  const FairShareStats& solver_stats() const;
  /// Flows whose finish the tolerance moved (by more than a picosecond's worth of bytes).
  std::uint64_t flows_snapped() const;

 private:
  using ClassId = FairShare::ClassId;
  using GroupId = FairShare::GroupId;

  struct Flow {
    ClassId cls;
    double target;  // class work at which this flow is done; valid once joined
    Bytes size;
    enum class State : std::uint8_t { Latency, Active, Done } state;
  };

  Simulator& sim_;
  FairShare share_;
  std::vector<Flow> flows_;
  std::vector<std::vector<std::pair<double, FlowId>>> pending_;  // per class: min-heap by target
  std::vector<GroupHeads> heads_;                                // per group
  std::vector<ClassHeap> class_heaps_;  // of groups that have had several classes
  IndexedHeap<Time> completions_;       // per group: when its earliest flow finishes
  IndexedHeap<Time> early_;             // approximate mode: when it is within the tolerance
  std::vector<GroupId> refresh_;        // groups whose completion entries must be recomputed
  std::uint32_t refresh_round_ = 1;
  std::vector<std::pair<Time, GroupId>> due_;  // groups that finish flows now
  std::vector<FlowId> finished_;
  FinishCallback on_finish_;
  std::function<void()> on_solve_;
  EventId wake_;
  Time wake_at_ = Time::max();
  double tolerance_ = 0;
  // Approximate mode, during a wake: the groups within reach of their end (and their
  // completion entries), and the seconds a flow may have left to end now (half the time to
  // the next wake).
  std::vector<std::pair<GroupId, Time>> reach_;
  double early_horizon_s_ = 0;
  bool in_wake_ = false;
  std::uint64_t solves_ = 0;
  std::uint64_t snapped_ = 0;

  // flow_network.cpp
  void join(FlowId f);
  void finish_zero_byte(FlowId f);
  void arm();
  void wake();
  void solve();
  void mark_refresh(GroupId g);
  // flow_completion.cpp
  void collect_finished();
  bool finish_due(GroupId g, bool due_now);
  std::int64_t finish_class(ClassId c, double work, bool forced);
  void push_head(GroupId g, ClassId c);
  const GroupHead* top_head(GroupId g);
  const GroupHead* find_top(GroupId g);
  GroupHeads& heads_of(GroupId g);
  void schedule_completion(GroupId g);

  /// Approximate mode: bytes a flow may end short of or past its size (half the tolerance).
  double slack(FlowId f) const { return tolerance_ / 2 * static_cast<double>(flows_[f].size.n); }
};

}  // namespace hopsim::sim
