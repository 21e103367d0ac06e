// The max-min fair rates of flow classes, kept between changes as a bottleneck structure and
// re-solved from the lowest level a change can reach (the maths is in flow_network.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/resource.hpp"
#include "sim/units.hpp"

namespace hopsim::sim {

class FairShare {
 public:
  using ClassId = std::uint32_t;
  using GroupId = std::uint32_t;

  /// One resource per capacity (bytes/s, each > 0).
  explicit FairShare(std::vector<double> capacity);

  /// The class of the flows with this route, created on first use.
  ClassId intern(std::span<const ResourceId> route);
  /// `delta` more (or, negative, fewer) flows of class `c` move from `now` on.
  void change(ClassId c, std::int64_t delta, Time now);
  /// True while changes wait for solve().
  bool dirty() const { return !changed_.empty(); }
  /// Re-solves, at `now`, every rate the changes since the last solve can affect.
  void solve(Time now);
  /// Groups whose rate, flow count or members changed since clear_touched(); some may be gone.
  std::span<const GroupId> touched() const { return touched_; }
  void clear_touched() {
    touched_.clear();
    ++solve_id_;
  }

  std::size_t resource_count() const { return capacity_.size(); }
  double capacity(ResourceId l) const { return capacity_[l]; }
  std::span<const ResourceId> route(ClassId c) const {
    return {route_pool_.data() + classes_[c].route_begin, classes_[c].route_size};
  }
  std::uint32_t flows(ClassId c) const { return classes_[c].n; }
  GroupId group_of(ClassId c) const { return classes_[c].group; }
  bool alive(GroupId g) const { return groups_[g].alive; }
  double rate(GroupId g) const { return groups_[g].rate; }
  std::span<const ClassId> members(GroupId g) const { return groups_[g].members; }
  /// Bytes each flow of class `c` has moved since the class's reference point, at `now`.
  double work(ClassId c, Time now) const;
  /// Sum of the current rates of the flows crossing `l`.
  double load(ResourceId l) const;
  /// Solver variables (groups) re-solved over all solves.
  std::uint64_t groups_solved() const { return groups_solved_; }
  /// Links currently treated as constraints (the others are checked after each solve).
  std::size_t tight_count() const;

 private:
  static constexpr GroupId kNone = ~GroupId{0};
  struct Class {
    std::uint32_t route_begin = 0;  // into route_pool_ / route_pos_
    std::uint32_t route_size = 0;
    std::uint32_t n = 0;  // active flows
    GroupId group = kNone;
    std::uint32_t member_pos = 0;
    double offset = 0;  // work of the class = work of its group + offset
  };
  struct Group {
    std::uint32_t sig_begin = 0;  // its tight links, sorted, in sig_pool_
    std::uint32_t sig_size = 0;
    std::uint32_t n = 0;     // flows of all members (kept as it was once merged away)
    std::uint32_t refs = 0;  // entries it holds in tight-link lists
    double rate = 0;         // per flow, bytes/s
    double work = 0;         // bytes per flow moved since the group was created, at work_time
    Time work_time;
    bool alive = false;
    bool solved = false;   // has a rate from a solve
    bool changed = false;  // flows joined or left since the last solve
    bool grew = false;     // flows joined since the last solve
    std::vector<ClassId> members;
  };
  struct Entry {
    double rate;    // the group's rate when written
    double before;  // load of the entries below this one
    GroupId g;
  };
  struct SigHash {
    const std::vector<ResourceId>* pool;
    std::size_t operator()(const std::pair<std::uint32_t, std::uint32_t>& key) const;
  };
  struct SigEq {
    const std::vector<ResourceId>* pool;
    bool operator()(const std::pair<std::uint32_t, std::uint32_t>& a,
                    const std::pair<std::uint32_t, std::uint32_t>& b) const;
  };
  using SigMap = std::unordered_map<std::pair<std::uint32_t, std::uint32_t>, GroupId, SigHash,
                                    SigEq>;

  std::vector<double> capacity_;
  std::vector<std::uint8_t> tight_;
  std::vector<std::vector<ClassId>> classes_on_;  // active classes per link, any order
  std::vector<std::vector<Entry>> list_;          // tight links: sorted part, then joiners
  std::vector<std::uint32_t> sorted_end_;
  std::vector<double> total_;  // tight links: load of the sorted part
  std::vector<double> load_;   // other links: load, kept incrementally
  std::vector<ResourceId> route_pool_;
  std::vector<std::uint32_t> route_pos_;  // index of the class in classes_on_[route link]
  std::vector<Class> classes_;
  SigMap class_of_route_;
  std::vector<ResourceId> sig_pool_;
  SigMap group_of_sig_;
  std::vector<Group> groups_;
  std::vector<GroupId> free_groups_;
  std::vector<GroupId> released_;  // gone groups, reusable after the current solve
  std::vector<GroupId> changed_;
  std::vector<GroupId> touched_;
  std::uint32_t solve_id_ = 1;  // touched_seen_ generation
  std::uint64_t groups_solved_ = 0;

  // Solver scratch, reused by every solve.
  std::uint32_t epoch_ = 1;
  std::vector<std::uint32_t> link_seen_, group_seen_, group_fixed_, touched_seen_;
  std::vector<std::uint32_t> start_, alive_on_, written_, delta_seen_;
  std::vector<double> left_, weight_, new_rate_, delta_;
  std::vector<ResourceId> region_links_, delta_links_, violated_;
  std::vector<GroupId> region_groups_, order_;
  std::vector<std::pair<double, ResourceId>> heap_;

  // fair_share.cpp: classes, groups, signatures.
  std::span<const ResourceId> sig(const Group& g) const {
    return {sig_pool_.data() + g.sig_begin, g.sig_size};
  }
  bool crosses(ClassId c, ResourceId l) const;
  double group_work(const Group& g, Time now) const;
  void settle(GroupId g, Time now);
  GroupId new_group();
  void release(GroupId g);
  void set_sig(GroupId g, std::vector<ResourceId>& links);
  void unmap_sig(GroupId g);
  void activate(ClassId c, Time now);
  void deactivate(ClassId c);
  void add_member(GroupId g, ClassId c);
  void remove_member(ClassId c);
  void touch(GroupId g);
  void mark_changed(GroupId g, bool grew);
  // fair_share_links.cpp: tight lists, promotion, demotion, merging.
  void promote(ResourceId p);
  void split(GroupId g, ResourceId p, std::vector<ResourceId>& rebuild);
  void rebuild(ResourceId l);
  void demote(ResourceId l, Time now);
  void merge(GroupId from, GroupId into, Time now);
  void drop_entry(GroupId g);
  double exact_load(ResourceId l, bool with_new_rates) const;
  // fair_share_solve.cpp: the incremental solve.
  double lowest_level();
  double join_level(ResourceId l, double changed_floor) const;
  void collect_region(double floor);
  void fill();
  bool verify();
  void commit(Time now);
  void rewrite_begin(ResourceId l);
  void rewrite_end(ResourceId l);
};

}  // namespace hopsim::sim
