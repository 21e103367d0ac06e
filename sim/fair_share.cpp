// Fair share: classes, the groups they form (identical tight links), signatures, membership.
#include "sim/fair_share.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace hopsim::sim {

namespace {

// Routes and signatures are a few links long: an insertion sort beats std::sort there.
void sort_short(std::vector<ResourceId>::iterator first, std::vector<ResourceId>::iterator last) {
  for (auto i = first; i != last; ++i) {
    const ResourceId v = *i;
    auto j = i;
    for (; j != first && v < *(j - 1); --j) {
      *j = *(j - 1);
    }
    *j = v;
  }
}

}  // namespace

FairShare::FairShare(std::vector<double> capacity) {
  capacity_ = std::move(capacity);
  const std::size_t n = capacity_.size();
  state_.assign(n, Link::Tight);  // every link starts as a constraint; solves free the idle ones
  cover_.resize(n);
  blockers_.assign(n, 0);
  stale_.assign(n, 0);
  idle_.resize(n);
  classes_on_.resize(n);
  list_.resize(n);
  sorted_end_.assign(n, 0);
  total_.assign(n, 0);
  load_.assign(n, 0);
  link_seen_.assign(n, 0);
  start_.assign(n, 0);
  alive_on_.assign(n, 0);
  solo_.assign(n, 0);
  written_.assign(n, 0);
  delta_seen_.assign(n, 0);
  left_.assign(n, 0);
  weight_.assign(n, 0);
  delta_.assign(n, 0);
}

// Routes are kept as sorted link sets: the order of a route does not matter to the rates,
// and a signature (a sorted set of tight links) can then be looked up as a route.
FairShare::ClassId FairShare::intern(std::span<const ResourceId> route) {
  const auto begin = static_cast<std::uint32_t>(route_pool_.size());
  HOPSIM_ASSERT(route.size() <= 0xffff, "route of {} resources", route.size());
  const auto size = static_cast<std::uint32_t>(route.size());
  for (ResourceId r : route) {
    HOPSIM_ASSERT(r < capacity_.size(), "route uses resource {} of {}", r, capacity_.size());
    route_pool_.push_back(r);
  }
  sort_short(route_pool_.begin() + begin, route_pool_.end());
  if (const ClassId known = class_of_route_.find(begin, size); known != PoolIndex::kNone) {
    route_pool_.resize(begin);  // known route: drop the copy
    return known;
  }
  const auto dup = std::adjacent_find(route_pool_.begin() + begin, route_pool_.end());
  HOPSIM_ASSERT(dup == route_pool_.end(), "route crosses resource {} twice", *dup);
  const auto id = static_cast<ClassId>(classes_.size());
  class_of_route_.set(begin, size, id);
  if (route_pos_.size() < route_pool_.size()) {
    route_pos_.resize(std::max(route_pool_.size(), 2 * route_pos_.size()), 0);
  }
  classes_.push_back(Class{begin, size});
  return id;
}

// The live group whose signature is sig_pool_[begin, begin + size), or kNone: from the index,
// else the group of the active class whose route is that set (such groups are not indexed).
FairShare::GroupId FairShare::find_group(std::uint32_t begin, std::uint32_t size) {
  if (const GroupId g = group_of_sig_.find(begin, size); g != PoolIndex::kNone) {
    return g;
  }
  const auto at = static_cast<std::uint32_t>(route_pool_.size());
  route_pool_.insert(route_pool_.end(), sig_pool_.begin() + begin,
                     sig_pool_.begin() + begin + size);
  const ClassId c = class_of_route_.find(at, size);
  route_pool_.resize(at);
  if (c == PoolIndex::kNone || classes_[c].n == 0) {
    return kNone;
  }
  const Group& group = groups_[classes_[c].group];
  const bool same = group.alive && group.sig_size == size &&
                    std::equal(sig_pool_.begin() + begin, sig_pool_.begin() + begin + size,
                               sig_pool_.begin() + group.sig_begin);
  return same ? classes_[c].group : kNone;
}

double FairShare::group_work(GroupId g, Time now) const {
  const Group& group = groups_[g];
  return now > group.work_time ? group.work + group.rate * (now - group.work_time).seconds()
                               : group.work;
}

double FairShare::load(ResourceId l) const {
  double sum = 0;
  for (ClassId c : classes_on_[l]) {
    sum += classes_[c].n * groups_[classes_[c].group].rate;
  }
  return sum;
}

void FairShare::settle(GroupId g, Time now) {
  groups_[g].work = group_work(g, now);
  groups_[g].work_time = now;
}

void FairShare::clear_touched() {
  touched_.clear();  // (a group released and made again since may be listed twice)
  ++solve_id_;
}

FairShare::GroupId FairShare::new_group() {
  GroupId g = 0;
  if (free_groups_.empty()) {
    HOPSIM_ASSERT(groups_.size() < kNone, "too many flow groups");
    g = static_cast<GroupId>(groups_.size());
    groups_.emplace_back();
    members_.emplace_back();
  } else {
    g = free_groups_.back();
    free_groups_.pop_back();
    groups_[g] = Group{};
    members_[g] = Members{};
  }
  groups_[g].alive = true;
  groups_[g].layout = ++layouts_;
  return g;
}

void FairShare::release(GroupId g) {
  Group& group = groups_[g];
  HOPSIM_ASSERT(!group.alive && members_[g].refs == 0, "group {} released while in use", g);
  released_.push_back(g);  // reused only after this solve: ids in its lists stay meaningful
}

// Gives `g` the tight links `links` (sorted here) and makes it the group of that signature.
void FairShare::set_sig(GroupId g, std::vector<ResourceId>& links) {
  std::sort(links.begin(), links.end());
  Group& group = groups_[g];
  group.sig_begin = static_cast<std::uint32_t>(sig_pool_.size());
  group.sig_size = static_cast<std::uint16_t>(links.size());
  sig_pool_.insert(sig_pool_.end(), links.begin(), links.end());
  group_of_sig_.set(group.sig_begin, group.sig_size, g);
  group.indexed = true;
}

// Forgets the signature of `g` if the index points to it (another group may share it).
void FairShare::unmap_sig(GroupId g) {
  const Group& group = groups_[g];
  if (group.indexed) {
    group_of_sig_.erase(group.sig_begin, group.sig_size, g);
  }
}

// Rewrites the signature pool with the signatures of live groups only, once most of it is
// left over from groups that are gone or changed signature.
void FairShare::compact_sigs() {
  if (sig_pool_.size() < 2 * sig_pool_after_ + 4096) {
    return;  // amortized: the pool at least doubled since the last compaction
  }
  std::size_t live = 0;
  for (const Group& group : groups_) {
    live += group.alive ? group.sig_size : 0;
  }
  std::vector<ResourceId> pool;
  pool.reserve(2 * live);
  group_of_sig_.clear();
  for (GroupId g = 0; g < groups_.size(); ++g) {
    Group& group = groups_[g];
    if (group.alive) {
      const auto begin = static_cast<std::uint32_t>(pool.size());
      pool.insert(pool.end(), sig_pool_.begin() + group.sig_begin,
                  sig_pool_.begin() + group.sig_begin + group.sig_size);
      group.sig_begin = begin;
    }
  }
  sig_pool_ = std::move(pool);
  sig_pool_after_ = sig_pool_.size();
  for (GroupId g = 0; g < groups_.size(); ++g) {
    if (groups_[g].alive && groups_[g].indexed) {
      group_of_sig_.set(groups_[g].sig_begin, groups_[g].sig_size, g);
    }
  }
}

void FairShare::touch(GroupId g) {
  if (groups_[g].touched != solve_id_) {
    groups_[g].touched = solve_id_;
    touched_.push_back(g);
  }
}

void FairShare::mark_changed(GroupId g, bool grew) {
  Group& group = groups_[g];
  group.grew = group.grew || grew;
  if (!group.changed) {
    group.changed = true;
    changed_.push_back(g);
  }
}

void FairShare::change(ClassId c, std::int64_t delta, Time now) {
  HOPSIM_ASSERT(delta != 0, "class {} changes by 0 flows", c);
  if (delta > 0 && classes_[c].n == 0) {
    activate(c, now);
  }
  Class& cls = classes_[c];
  Group& group = groups_[cls.group];
  HOPSIM_ASSERT(delta > 0 || cls.n >= static_cast<std::uint64_t>(-delta),
                "class {} loses {} of its {} flows", c, -delta, cls.n);
  const auto k = static_cast<std::uint32_t>(delta > 0 ? delta : -delta);
  if (cls.free > 0) {
    for (ResourceId l : route(c)) {
      if (state_[l] == Link::Free) {
        load_[l] += static_cast<double>(delta) * group.rate;
      }
    }
  }
  cls.n = delta > 0 ? cls.n + k : cls.n - k;
  group.n = delta > 0 ? group.n + k : group.n - k;
  mark_changed(cls.group, delta > 0);
  if (cls.n == 0) {
    deactivate(c);
  }
}

// A class starts moving: it enters the lists of its links and the group of its tight links.
void FairShare::activate(ClassId c, Time now) {
  const auto links = route(c);
  if (std::none_of(links.begin(), links.end(), [&](ResourceId l) { return tight(l); })) {
    for (ResourceId l : links) {
      promote(l);  // a class with no constraint at all would get an infinite rate
    }
  }
  for (ResourceId l : links) {
    if (state_[l] == Link::Safe && !covered(c, l)) {
      set_free(l, true);  // its cover no longer bounds its load: keep the load instead
      blockers_[l] = 0;
    }
    if (state_[l] == Link::Free && !in_cover(c, l)) {
      ++blockers_[l];
    }
  }
  Class& cls = classes_[c];
  cls.free = 0;
  for (std::uint32_t i = 0; i < cls.route_size; ++i) {
    const ResourceId l = route_pool_[cls.route_begin + i];
    auto& on = classes_on_[l];
    route_pos_[cls.route_begin + i] = static_cast<std::uint32_t>(on.size());
    on.push_back(c);
    cls.free += state_[l] == Link::Free ? 1U : 0U;
  }
  const GroupId g = group_for(c, now);
  add_member(g, c);
  classes_[c].offset = -group_work(g, now);
}

// The group of the tight links on the route of `c`, created (as a joiner) if there is none.
FairShare::GroupId FairShare::group_for(ClassId c, Time now) {
  const auto begin = static_cast<std::uint32_t>(sig_pool_.size());
  for (ResourceId l : route(c)) {
    if (tight(l)) {
      sig_pool_.push_back(l);
    }
  }
  sort_short(sig_pool_.begin() + begin, sig_pool_.end());
  const auto size = static_cast<std::uint32_t>(sig_pool_.size()) - begin;
  // With its whole route tight, only indexed groups can share its signature (a class's route
  // is its own); otherwise the group of the class whose route is the signature may.
  const GroupId known =
      size == classes_[c].route_size ? group_of_sig_.find(begin, size) : find_group(begin, size);
  if (known != PoolIndex::kNone) {
    sig_pool_.resize(begin);
    return known;
  }
  const GroupId g = new_group();
  Group& group = groups_[g];
  group.sig_begin = begin;
  group.sig_size = static_cast<std::uint16_t>(size);
  group.work_time = now;
  members_[g].refs = size;
  if (size < classes_[c].route_size) {
    group_of_sig_.set(begin, size, g);
    group.indexed = true;
  }
  for (ResourceId l : sig(group)) {
    list_[l].push_back(Entry{0, 0, g});  // a joiner: after the sorted part until solved
  }
  return g;
}

void FairShare::add_member(GroupId g, ClassId c) {
  Members& members = members_[g];
  Class& cls = classes_[c];
  cls.group = g;
  cls.prev = kNoClass;
  cls.next = members.first;
  if (members.first != kNoClass) {
    classes_[members.first].prev = c;
  }
  members.first = c;
  ++members.size;
  groups_[g].free += cls.free;
}

void FairShare::remove_member(ClassId c) {
  Class& cls = classes_[c];
  Members& members = members_[cls.group];
  if (cls.prev != kNoClass) {
    classes_[cls.prev].next = cls.next;
  } else {
    members.first = cls.next;
  }
  if (cls.next != kNoClass) {
    classes_[cls.next].prev = cls.prev;
  }
  --members.size;
  groups_[cls.group].free -= cls.free;
}

// A class stops moving: it leaves its links' lists and its group, which ends with its last.
void FairShare::deactivate(ClassId c) {
  const Class& cls = classes_[c];
  for (std::uint32_t i = 0; i < cls.route_size; ++i) {
    const ResourceId l = route_pool_[cls.route_begin + i];
    auto& on = classes_on_[l];
    const std::uint32_t pos = route_pos_[cls.route_begin + i];
    const ClassId moved = on.back();
    on[pos] = moved;
    on.pop_back();
    if (moved != c) {
      const Class& m = classes_[moved];
      for (std::uint32_t k = 0; k < m.route_size; ++k) {
        if (route_pool_[m.route_begin + k] == l) {
          route_pos_[m.route_begin + k] = pos;
          break;
        }
      }
    }
  }
  for (ResourceId l : route(c)) {
    if (state_[l] == Link::Free && !in_cover(c, l) && --blockers_[l] == 0) {
      unblock(l);
    }
  }
  const GroupId g = cls.group;
  remove_member(c);
  classes_[c].group = kNone;
  if (members_[g].size == 0) {
    groups_[g].alive = false;  // its entries go at the next rewrite of its links
    unmap_sig(g);
  }
}

}  // namespace hopsim::sim
