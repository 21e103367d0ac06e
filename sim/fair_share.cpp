// Fair share: classes, the groups they form (identical tight links), signatures, membership.
#include "sim/fair_share.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace hopsim::sim {

std::size_t FairShare::SigHash::operator()(
    const std::pair<std::uint32_t, std::uint32_t>& key) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ key.second;
  for (std::uint32_t i = 0; i < key.second; ++i) {
    h ^= (*pool)[key.first + i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return static_cast<std::size_t>(h);
}

bool FairShare::SigEq::operator()(const std::pair<std::uint32_t, std::uint32_t>& a,
                                  const std::pair<std::uint32_t, std::uint32_t>& b) const {
  return a.second == b.second && std::equal(pool->begin() + a.first,
                                            pool->begin() + a.first + a.second,
                                            pool->begin() + b.first);
}

FairShare::FairShare(std::vector<double> capacity)
    : capacity_(std::move(capacity)),
      class_of_route_(64, SigHash{&route_pool_}, SigEq{&route_pool_}),
      group_of_sig_(64, SigHash{&sig_pool_}, SigEq{&sig_pool_}) {
  const std::size_t n = capacity_.size();
  tight_.assign(n, 0);
  classes_on_.resize(n);
  list_.resize(n);
  sorted_end_.assign(n, 0);
  total_.assign(n, 0);
  load_.assign(n, 0);
  link_seen_.assign(n, 0);
  start_.assign(n, 0);
  alive_on_.assign(n, 0);
  written_.assign(n, 0);
  delta_seen_.assign(n, 0);
  left_.assign(n, 0);
  weight_.assign(n, 0);
  delta_.assign(n, 0);
}

FairShare::ClassId FairShare::intern(std::span<const ResourceId> route) {
  const auto begin = static_cast<std::uint32_t>(route_pool_.size());
  const auto size = static_cast<std::uint32_t>(route.size());
  for (ResourceId r : route) {
    HOPSIM_ASSERT(r < capacity_.size(), "route uses resource {} of {}", r, capacity_.size());
    route_pool_.push_back(r);
  }
  const auto [it, inserted] =
      class_of_route_.try_emplace({begin, size}, static_cast<ClassId>(classes_.size()));
  if (!inserted) {
    route_pool_.resize(begin);  // known route: drop the copy
    return it->second;
  }
  for (std::uint32_t i = 0; i + 1 < size; ++i) {
    for (std::uint32_t j = i + 1; j < size; ++j) {
      HOPSIM_ASSERT(route[i] != route[j], "route crosses resource {} twice", route[i]);
    }
  }
  route_pos_.resize(route_pool_.size(), 0);
  classes_.push_back(Class{begin, size});
  return it->second;
}

bool FairShare::crosses(ClassId c, ResourceId l) const {
  const auto r = route(c);
  return std::find(r.begin(), r.end(), l) != r.end();
}

double FairShare::group_work(const Group& g, Time now) const {
  return now > g.work_time ? g.work + g.rate * (now - g.work_time).seconds() : g.work;
}

double FairShare::work(ClassId c, Time now) const {
  return group_work(groups_[classes_[c].group], now) + classes_[c].offset;
}

void FairShare::settle(GroupId g, Time now) {
  Group& group = groups_[g];
  group.work = group_work(group, now);
  group.work_time = now;
}

double FairShare::load(ResourceId l) const {
  double sum = 0;
  for (ClassId c : classes_on_[l]) {
    sum += classes_[c].n * groups_[classes_[c].group].rate;
  }
  return sum;
}

std::size_t FairShare::tight_count() const {
  return static_cast<std::size_t>(std::count(tight_.begin(), tight_.end(), 1));
}

FairShare::GroupId FairShare::new_group() {
  GroupId g = 0;
  if (free_groups_.empty()) {
    HOPSIM_ASSERT(groups_.size() < kNone, "too many flow groups");
    g = static_cast<GroupId>(groups_.size());
    groups_.emplace_back();
    group_seen_.push_back(0);
    group_fixed_.push_back(0);
    touched_seen_.push_back(0);
    new_rate_.push_back(0);
  } else {
    g = free_groups_.back();
    free_groups_.pop_back();
    groups_[g] = Group{};
  }
  groups_[g].alive = true;
  return g;
}

void FairShare::release(GroupId g) {
  Group& group = groups_[g];
  HOPSIM_ASSERT(!group.alive && group.refs == 0, "group {} released while in use", g);
  group.members = {};
  released_.push_back(g);  // reused only after this solve: ids in its lists stay meaningful
}

// Gives `g` the tight links `links` (sorted here) and makes it the group of that signature.
void FairShare::set_sig(GroupId g, std::vector<ResourceId>& links) {
  std::sort(links.begin(), links.end());
  Group& group = groups_[g];
  group.sig_begin = static_cast<std::uint32_t>(sig_pool_.size());
  group.sig_size = static_cast<std::uint32_t>(links.size());
  sig_pool_.insert(sig_pool_.end(), links.begin(), links.end());
  group_of_sig_[{group.sig_begin, group.sig_size}] = g;
}

// Forgets the signature of `g` if the map points to it (another group may share it).
void FairShare::unmap_sig(GroupId g) {
  const Group& group = groups_[g];
  const auto it = group_of_sig_.find({group.sig_begin, group.sig_size});
  if (it != group_of_sig_.end() && it->second == g) {
    group_of_sig_.erase(it);
  }
}

void FairShare::touch(GroupId g) {
  if (touched_seen_[g] != solve_id_) {
    touched_seen_[g] = solve_id_;
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
  for (ResourceId l : route(c)) {
    if (tight_[l] == 0) {
      load_[l] += static_cast<double>(delta) * group.rate;
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
  if (std::none_of(links.begin(), links.end(), [&](ResourceId l) { return tight_[l] != 0; })) {
    for (ResourceId l : links) {
      promote(l);  // a class with no constraint at all would get an infinite rate
    }
  }
  const Class& cls = classes_[c];
  for (std::uint32_t i = 0; i < cls.route_size; ++i) {
    auto& on = classes_on_[route_pool_[cls.route_begin + i]];
    route_pos_[cls.route_begin + i] = static_cast<std::uint32_t>(on.size());
    on.push_back(c);
  }
  const auto begin = static_cast<std::uint32_t>(sig_pool_.size());
  for (ResourceId l : links) {
    if (tight_[l] != 0) {
      sig_pool_.push_back(l);
    }
  }
  std::sort(sig_pool_.begin() + begin, sig_pool_.end());
  const auto size = static_cast<std::uint32_t>(sig_pool_.size()) - begin;
  GroupId g = kNone;
  if (const auto it = group_of_sig_.find({begin, size}); it != group_of_sig_.end()) {
    g = it->second;
    sig_pool_.resize(begin);
  } else {
    g = new_group();
    Group& group = groups_[g];
    group.sig_begin = begin;
    group.sig_size = size;
    group.work_time = now;
    group.refs = size;
    group_of_sig_[{begin, size}] = g;
    for (ResourceId l : sig(group)) {
      list_[l].push_back(Entry{0, 0, g});  // a joiner: after the sorted part until solved
    }
  }
  add_member(g, c);
  classes_[c].offset = -group_work(groups_[g], now);
}

void FairShare::add_member(GroupId g, ClassId c) {
  Group& group = groups_[g];
  classes_[c].group = g;
  classes_[c].member_pos = static_cast<std::uint32_t>(group.members.size());
  group.members.push_back(c);
}

void FairShare::remove_member(ClassId c) {
  Group& group = groups_[classes_[c].group];
  const std::uint32_t pos = classes_[c].member_pos;
  const ClassId moved = group.members.back();
  group.members[pos] = moved;
  classes_[moved].member_pos = pos;
  group.members.pop_back();
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
  const GroupId g = cls.group;
  remove_member(c);
  classes_[c].group = kNone;
  if (groups_[g].members.empty()) {
    groups_[g].alive = false;  // its entries go at the next rewrite of its links
    unmap_sig(g);
  }
}

}  // namespace hopsim::sim
