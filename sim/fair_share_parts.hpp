// The state FairShare keeps per link, class and group (see fair_share.hpp).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/pool_index.hpp"
#include "sim/resource.hpp"
#include "sim/units.hpp"

namespace hopsim::sim {

/// Counters of the solver's structural work, for benchmarks and reports.
struct FairShareStats {
  std::uint64_t groups_solved = 0;   ///< solver variables re-filled, over all solves
  std::uint64_t groups_changed = 0;  ///< of those, the ones whose rate changed
  std::uint64_t promotions = 0;      ///< links that became constraints
  std::uint64_t demotions = 0;       ///< links that stopped being constraints
  std::uint64_t redos = 0;           ///< solves redone because a free link would overflow
  std::uint64_t merges = 0;          ///< groups merged into another
  std::uint64_t splits = 0;          ///< groups split by a promotion
};

namespace share {

using ClassId = std::uint32_t;
using GroupId = std::uint32_t;
inline constexpr ClassId kNoClass = ~ClassId{0};
inline constexpr GroupId kNoGroup = ~GroupId{0};

/// A tight link is a constraint of the solve; a free one is checked after it (its load kept);
/// a safe one never needs a check: the tight links of its cover bound its load.
enum class Link : std::uint8_t { Tight, Free, Safe };

/// The flows with one route.
struct Class {
  std::uint32_t route_begin = 0;  // into FairShare's route pool
  std::uint32_t route_size = 0;
  std::uint32_t n = 0;     // active flows
  std::uint32_t free = 0;  // free links on its route
  GroupId group = kNoGroup;
  ClassId next = kNoClass;  // the other members of its group, a doubly linked list
  ClassId prev = kNoClass;
  double offset = 0;  // work of the class = work of its group + offset
};

/// The classes that cross the same tight links: one rate. What a solve reads and writes for
/// a group sits in one cache line (large solves are bound by memory latency, not arithmetic).
struct alignas(64) Group {
  double rate = 0;      // per flow, bytes/s
  double new_rate = 0;  // the solve's rate, valid while fixed (below)
  double work = 0;      // bytes per flow moved since the group was created, at work_time
  Time work_time;
  std::uint64_t layout = 0;
  std::uint32_t n = 0;          // flows of all members (kept as it was once merged away)
  std::uint32_t sig_begin = 0;  // its tight links, sorted, in FairShare's signature pool
  std::uint32_t seen = 0;       // == FairShare::epoch_ once visited by the current pass
  std::uint32_t free = 0;       // free links on its members' routes, with repeats
  std::uint16_t sig_size = 0;
  bool alive : 1 = false;
  bool solved : 1 = false;    // has a rate from a solve
  bool changed : 1 = false;   // flows joined or left since the last solve
  bool grew : 1 = false;      // flows joined since the last solve
  bool indexed : 1 = false;   // in the signature index (not if made for a class whose whole route
                              // is tight: no other class can have that signature then)
  bool fixed : 1 = false;     // the filling of the pass `seen` gave it new_rate
  std::uint32_t touched = 0;  // == FairShare::solve_id_ while in touched_
};

static_assert(sizeof(Group) == 64);

/// The members of a group (a list through Class::next) and its list entries: read when its
/// membership changes, not by every solve.
struct Members {
  ClassId first = kNoClass;
  std::uint32_t size = 0;
  std::uint32_t refs = 0;  // entries it holds in tight-link lists
};

/// How far ahead loops over groups ask for a group's cache line.
inline constexpr std::size_t kPrefetch = 8;

/// A group in a tight link's list.
struct Entry {
  double rate;    // the group's rate when written
  double before;  // load of the entries below this one
  GroupId g;
};

/// How long a tight link has been idle (below half its capacity).
struct Idle {
  std::uint32_t solves = 0;  // solves in a row that left it idle
  std::uint64_t work = 0;    // groups they re-filled through it
};

/// Everything FairShare keeps (its base, so that its header stays short).
struct State {
  State() : class_of_route_(&route_pool_), group_of_sig_(&sig_pool_) {}

  std::vector<double> capacity_;
  std::vector<Link> state_;
  std::vector<std::vector<ClassId>> classes_on_;  // active classes per link, any order
  std::vector<std::vector<Entry>> list_;          // tight links: sorted part, then joiners
  std::vector<std::uint32_t> sorted_end_;
  std::vector<double> total_;                   // tight links: load of the sorted part
  std::vector<double> load_;                    // free links: load, kept incrementally
  std::vector<std::vector<ResourceId>> cover_;  // safe links: tight links bounding the load
  std::vector<std::uint32_t> blockers_;         // free links: classes outside the cover
  std::vector<std::uint8_t> stale_;             // tight links whose list needs a rebuild
  std::vector<Idle> idle_;
  std::vector<ResourceId> stale_links_;
  std::vector<ResourceId> route_pool_;
  std::vector<std::uint32_t> route_pos_;  // index of the class in classes_on_[route link]
  std::vector<Class> classes_;
  PoolIndex class_of_route_;
  std::vector<ResourceId> sig_pool_;
  std::size_t sig_pool_after_ = 0;  // its size after the last compaction
  PoolIndex group_of_sig_;
  std::vector<Group> groups_;
  std::vector<Members> members_;
  std::vector<GroupId> free_groups_, released_;  // released: reusable after this solve
  std::vector<GroupId> changed_, touched_;
  std::uint32_t solve_id_ = 1;  // generation of Group::touched
  std::uint64_t layouts_ = 0;
  FairShareStats stats_;

  // Solver scratch, reused by every solve.
  std::uint32_t epoch_ = 1;
  std::vector<std::uint32_t> link_seen_;
  std::vector<std::uint32_t> start_, alive_on_, written_, delta_seen_;
  std::vector<std::uint8_t> solo_;  // region links whose groups cross no other tight link
  std::vector<double> left_, weight_, delta_;
  std::vector<ResourceId> region_links_, delta_links_, violated_;
  std::vector<GroupId> region_groups_, order_, to_verify_;
  std::vector<std::pair<double, ResourceId>> heap_;
};

}  // namespace share
}  // namespace hopsim::sim
