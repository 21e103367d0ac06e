// The max-min fair rates of flow classes, kept between changes as a bottleneck structure and
// re-solved from the lowest level a change can reach (the maths is in flow_network.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "sim/fair_share_parts.hpp"
#include "sim/pool_index.hpp"
#include "sim/resource.hpp"

namespace hopsim::sim {

class FairShare : private share::State {
 public:
  using ClassId = share::ClassId;
  using GroupId = share::GroupId;

  /// One resource per capacity (bytes/s, each > 0).
  explicit FairShare(std::vector<double> capacity);
  FairShare(const FairShare&) = delete;  // the indexes point into its pools
  FairShare& operator=(const FairShare&) = delete;

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

  void clear_touched();

  std::size_t resource_count() const { return capacity_.size(); }

  double capacity(ResourceId l) const { return capacity_[l]; }

  std::span<const ResourceId> route(ClassId c) const {
    return {route_pool_.data() + classes_[c].route_begin, classes_[c].route_size};
  }

  GroupId group_of(ClassId c) const { return classes_[c].group; }

  bool alive(GroupId g) const { return groups_[g].alive; }

  double rate(GroupId g) const { return groups_[g].rate; }

  /// The members of a group, as a list: first_member, then next_member until kNoClass.
  static constexpr ClassId kNoClass = share::kNoClass;

  ClassId first_member(GroupId g) const { return members_[g].first; }

  ClassId next_member(ClassId c) const { return classes_[c].next; }

  std::uint32_t member_count(GroupId g) const { return members_[g].size; }

  /// Changes (to a value no group had) when classes move into or out of `g` other than by
  /// starting or stopping (merges, splits), when their offsets change, and when the id is
  /// reused; so a structure over a group's classes stays valid while it does not change.
  std::uint64_t layout(GroupId g) const { return groups_[g].layout; }

  /// Bytes per flow group `g` has moved since it was created, at `now`.
  double group_work(GroupId g, Time now) const;

  /// Work of class `c` minus the work of its group.
  double offset(ClassId c) const { return classes_[c].offset; }

  /// Bytes each flow of class `c` has moved since the class's reference point, at `now`.
  double work(ClassId c, Time now) const { return group_work(classes_[c].group, now) + offset(c); }

  /// Asks the cache for group `g`'s state ahead of a loop's use (large solves wait on memory).
  void prefetch(GroupId g) const { __builtin_prefetch(&groups_[g]); }

  /// Sum of the current rates of the flows crossing `l`.
  double load(ResourceId l) const;

  const FairShareStats& stats() const { return stats_; }

 private:
  static constexpr GroupId kNone = share::kNoGroup;
  using Link = share::Link;
  using Class = share::Class;
  using Group = share::Group;
  using Members = share::Members;
  using Entry = share::Entry;

  // fair_share.cpp: classes, groups, signatures, membership.
  std::span<const ResourceId> sig(const Group& g) const {
    return {sig_pool_.data() + g.sig_begin, g.sig_size};
  }

  bool tight(ResourceId l) const { return state_[l] == Link::Tight; }

  void settle(GroupId g, Time now);
  GroupId new_group();
  void release(GroupId g);
  void set_sig(GroupId g, std::vector<ResourceId>& links);
  void unmap_sig(GroupId g);
  GroupId find_group(std::uint32_t begin, std::uint32_t size);
  void compact_sigs();
  GroupId group_for(ClassId c, Time now);
  void activate(ClassId c, Time now);
  void deactivate(ClassId c);
  void add_member(GroupId g, ClassId c);
  void remove_member(ClassId c);
  void touch(GroupId g);
  void mark_changed(GroupId g, bool grew);
  // fair_share_links.cpp: link states, tight lists, splits, merges.
  void promote(ResourceId p);
  void split(GroupId g, ResourceId p);
  void rebuild(ResourceId l);
  void rebuild_stale();
  void demote(ResourceId l, Time now);
  void regroup(ResourceId l, Time now);
  void merge(GroupId from, GroupId into, Time now);
  void drop_entry(GroupId g);
  bool in_cover(ClassId c, ResourceId l) const;
  bool covered(ClassId c, ResourceId l);
  std::uint32_t certify(ResourceId l);
  void unblock(ResourceId l);
  void set_free(ResourceId l, bool free);
  double exact_load(ResourceId l, bool with_new_rates) const;
  // fair_share_solve.cpp: the incremental solve.
  double lowest_level();
  double join_level(ResourceId l, double changed_floor) const;
  void collect_region(double floor);
  void fill();
  void fix_on(ResourceId l, double key);
  bool verify();
  void commit(Time now);
  void rewrite_begin(ResourceId l);
  void rewrite_end(ResourceId l);
};

}  // namespace hopsim::sim
