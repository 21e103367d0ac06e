// Max-min fair sharing of link bandwidth among flows (a fluid model), updated incrementally.
//
// Model (SimGrid's fluid network model, solved with progressive filling):
//   Resources l have capacities C_l (bytes/s). An active flow f crosses the resources of its
//   route R_f and moves at rate r_f. The rates are the max-min fair allocation:
//       sum_{f : l in R_f} r_f <= C_l  for every l,
//   and no r_f can grow without shrinking some r_g <= r_f. Progressive filling computes it:
//   raise every unfixed rate together; when a resource saturates, fix the rates of its flows
//   at its fair share  s_l = (C_l - fixed load on l) / (number of unfixed flows on l).
//   The level at which a flow is fixed is its rate; the level of a resource is the rate of
//   the flows it fixes. A flow's rate is the lowest level on its route.
//
// Classes and groups: flows with identical routes form a class; classes whose routes cross the
//   same *tight* links (below) form a group, one solver variable of weight n_g (its flows):
//   they get the same rate. A group keeps W_g, the bytes moved per flow (the integral of its
//   rate); flow f finishes when its class's work reaches its target (join work + size).
//
// Tight links: a link below capacity limits nobody, so the max-min allocation is the same
//   without it. Only tight links enter the solve; after each solve the others are checked
//   against their capacity, and one that would be overloaded becomes tight and the solve is
//   redone. A tight link left below capacity by a solve stops being tight. (In an
//   all-to-all the NVLinks stop being tight once the intra-node flows are done, which cuts
//   the network into independent rails and merges the 8 classes of a NIC pair into a group.)
//
// Why a change needs only a partial re-solve (exact, not a heuristic): if flows of a group
//   with rate r leave, every link on its route has level >= r, so below r the filling sees the
//   same links saturate at the same levels: every group with rate < r keeps it. If flows
//   join, nothing changes below the level at which a link they cross would now saturate
//   (solved exactly from the link's list, sorted by rate) nor below the old rate of a group
//   that grew. So at each batch of changes, with theta the lowest such level, the groups with
//   rate < theta are frozen, and the max-min allocation of the rest on what the frozen ones
//   leave is a progressive filling of the groups at or above theta connected to a change.
//   Each tight link keeps its groups sorted by rate, with the load of those below each
//   entry, so that set and its residual capacities are found in time proportional to its
//   size, not to the network's. The re-filled groups are fixed in increasing rate order, which
//   is written back as the new top of each list. (Rates are compared with a relative margin
//   of 1e-9: groups that close to theta are re-filled too, which is always safe.)
//
// Completion: a flow is complete when its remaining bytes are at most what it moves in one
//   picosecond. Finish times are rounded up to whole picoseconds. A group's earliest finish
//   sits in an indexed heap, moved in place when its rate changes.
//
// Approximate mode (set_tolerance(t), off by default): when flows finish, every flow with at
//   most t of its size left finishes in the same batch, so fewer re-solves happen. A flow
//   never finishes later than in exact mode, nor with more than t of its bytes unmoved.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "sim/fair_share.hpp"
#include "sim/indexed_heap.hpp"
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
  /// Approximate mode: a flow may finish when it is within `relative` of its size of its end,
  /// either side (0, the default: exact).
  void set_tolerance(double relative);
  double tolerance() const { return tolerance_; }

  /// Starts a flow now: it waits `latency`, then moves `size` bytes along `route`
  /// (a non-empty list of resources). Ids are dense, in start order from 0.
  FlowId start(std::span<const ResourceId> route, Bytes size, Time latency);

  std::size_t resource_count() const { return share_.resource_count(); }
  Bandwidth capacity(ResourceId r) const { return {share_.capacity(r)}; }
  /// True while a flow is past its latency and still has bytes to move.
  bool moving(FlowId f) const { return flows_[f].state == Flow::State::Active; }
  /// Current rate of a flow that is moving bytes; 0 before it joins and after it finishes.
  double rate_bytes_per_s(FlowId f) const;
  /// Sum of the current rates of the flows crossing `r`.
  double load_bytes_per_s(ResourceId r) const { return share_.load(r); }
  /// Bytes `f` still has to move (its size before it joins, 0 once finished).
  double remaining_bytes(FlowId f) const;

  std::uint64_t flows_started() const { return flows_.size(); }
  std::uint64_t solves() const { return solves_; }
  /// Solver variables (groups of flows) re-filled, summed over all solves.
  std::uint64_t classes_solved() const { return share_.stats().groups_solved; }
  /// The solver's counters (promotions, demotions, merges, ...).
  const FairShareStats& solver_stats() const { return share_.stats(); }
  /// Flows whose finish the tolerance moved (more than a picosecond's worth of bytes off).
  std::uint64_t flows_snapped() const { return snapped_; }

 private:
  using ClassId = FairShare::ClassId;
  using GroupId = FairShare::GroupId;

  struct Flow {
    ClassId cls;
    double target;  // class work at which this flow is done; valid once joined
    Bytes size;
    enum class State : std::uint8_t { Latency, Active, Done } state;
  };

  // A group's flows by finish: per class a min-heap of (target, flow); per group (with more
  // than one class) a lazy min-heap of its classes' earliest flows, keyed in group work:
  // target - class offset. Entries go stale when their flow finishes, their class stops
  // being in the group's list head, or the group's layout changes (then it is rebuilt).
  struct Head {
    double key;
    ClassId cls;
    FlowId flow;
    bool operator>(const Head& o) const { return key != o.key ? key > o.key : cls > o.cls; }
  };
  struct Heads {
    std::vector<Head> heap;
    std::uint64_t layout = 0;  // the group's layout when the heap was built; 0: none
    Head top{};                // the group's earliest flow, while top_layout is current
    std::uint64_t top_layout = 0;
    Head scheduled{};          // the head and rate its completion entries were computed for
    double scheduled_rate = 0;
  };

  Simulator& sim_;
  FairShare share_;
  std::vector<Flow> flows_;
  std::vector<std::vector<std::pair<double, FlowId>>> pending_;  // per class: min-heap by target
  std::vector<Heads> heads_;                                       // per group
  IndexedHeap<Time> completions_;  // per group: when its earliest flow finishes
  IndexedHeap<Time> early_;        // approximate mode: when it is within the tolerance
  std::vector<GroupId> refresh_;   // groups whose completion entries must be recomputed
  std::vector<std::uint32_t> refresh_mark_;  // == refresh_round_ while in refresh_
  std::uint32_t refresh_round_ = 1;
  std::vector<std::pair<Time, GroupId>> due_;
  std::vector<FlowId> finished_;
  FinishCallback on_finish_;
  std::function<void()> on_solve_;
  EventId wake_;
  Time wake_at_ = Time::max();
  double tolerance_ = 0;
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
  const Head* top_head(GroupId g);
  const Head* find_top(GroupId g);
  void schedule_completion(GroupId g);
};

}  // namespace hopsim::sim
