// Fair share: the state of each link (tight, free, safe), the sorted lists of tight links, and
// the group changes (splits, merges) that follow when a link changes state.
#include <algorithm>

#include "sim/assert.hpp"
#include "sim/fair_share.hpp"

namespace hopsim::sim {

void FairShare::drop_entry(GroupId g) {
  Members& members = members_[g];
  HOPSIM_ASSERT(members.refs > 0, "group {} drops an entry it does not hold", g);
  if (--members.refs == 0 && !groups_[g].alive) {
    release(g);
  }
}

double FairShare::exact_load(ResourceId l, bool with_new_rates) const {
  double sum = 0;
  for (ClassId c : classes_on_[l]) {
    const GroupId g = classes_[c].group;
    const Group& group = groups_[g];
    const bool fresh = with_new_rates && group.seen == epoch_ && group.fixed;
    sum += classes_[c].n * (fresh ? group.new_rate : group.rate);
  }
  return sum;
}

// A free link keeps its load and counts in the classes and groups that cross it.
void FairShare::set_free(ResourceId l, bool free) {
  if ((state_[l] == Link::Free) == free) {
    return;
  }
  state_[l] = free ? Link::Free : Link::Tight;  // callers that mean Safe set it after
  if (free) {
    load_[l] = exact_load(l, false);
  }
  for (ClassId c : classes_on_[l]) {
    Class& cls = classes_[c];
    Group& group = groups_[cls.group];
    cls.free = free ? cls.free + 1 : cls.free - 1;
    group.free = free ? group.free + 1 : group.free - 1;
  }
}

// Link `p` becomes a constraint: every group that crosses it must have it in its signature,
// so a group whose members only partly cross it splits in two (same rate, same work). The
// lists that change are rebuilt once, at the next solve.
void FairShare::promote(ResourceId p) {
  if (tight(p)) {
    return;
  }
  set_free(p, false);
  state_[p] = Link::Tight;
  cover_[p].clear();
  ++stats_.promotions;
  ++epoch_;
  std::vector<GroupId> crossing;
  for (ClassId c : classes_on_[p]) {
    const GroupId g = classes_[c].group;
    if (groups_[g].seen != epoch_) {
      groups_[g].seen = epoch_;
      crossing.push_back(g);
    }
  }
  for (GroupId g : crossing) {
    split(g, p);
  }
  if (stale_[p] == 0) {
    stale_[p] = 1;
    stale_links_.push_back(p);
  }
}

void FairShare::split(GroupId g, ResourceId p) {
  std::vector<ResourceId> links(sig(groups_[g]).begin(), sig(groups_[g]).end());
  links.push_back(p);
  std::vector<ClassId> moving;
  for (ClassId c = members_[g].first; c != kNoClass; c = classes_[c].next) {
    const auto r = route(c);
    if (std::find(r.begin(), r.end(), p) != r.end()) {
      moving.push_back(c);
    }
  }
  if (moving.size() == members_[g].size) {
    unmap_sig(g);
    set_sig(g, links);
    ++members_[g].refs;  // its entry on p, written by the rebuild of p
    return;
  }
  ++stats_.splits;
  const GroupId h = new_group();
  Group& from = groups_[g];
  Group& part = groups_[h];
  part.rate = from.rate;
  part.work = from.work;
  part.work_time = from.work_time;
  part.solved = from.solved;
  part.grew = from.grew;
  set_sig(h, links);
  members_[h].refs = part.sig_size;
  for (ClassId c : moving) {
    remove_member(c);
    add_member(h, c);
    part.n += classes_[c].n;
  }
  groups_[g].n -= part.n;
  groups_[g].layout = ++layouts_;
  if (groups_[g].changed) {
    mark_changed(h, part.grew);
  }
  for (ResourceId l : sig(groups_[g])) {
    if (stale_[l] == 0) {
      stale_[l] = 1;
      stale_links_.push_back(l);
    }
  }
  touch(g);
  touch(h);
}

void FairShare::rebuild_stale() {
  for (ResourceId l : stale_links_) {
    stale_[l] = 0;
    if (tight(l)) {
      rebuild(l);
    }
  }
  stale_links_.clear();
}

// Rewrites the list of tight link `l` from its classes: solved groups sorted by rate, then
// the groups that joined since the last solve. Entries of gone groups are dropped.
void FairShare::rebuild(ResourceId l) {
  for (const Entry& e : list_[l]) {
    if (!groups_[e.g].alive) {
      drop_entry(e.g);
    }
  }
  ++epoch_;
  std::vector<Entry> solved;
  std::vector<Entry> joiners;
  for (ClassId c : classes_on_[l]) {
    const GroupId g = classes_[c].group;
    if (groups_[g].seen != epoch_) {
      groups_[g].seen = epoch_;
      (groups_[g].solved ? solved : joiners).push_back(Entry{groups_[g].rate, 0, g});
    }
  }
  std::sort(solved.begin(), solved.end(), [](const Entry& a, const Entry& b) {
    return a.rate != b.rate ? a.rate < b.rate : a.g < b.g;
  });
  double sum = 0;
  for (Entry& e : solved) {
    e.before = sum;
    sum += groups_[e.g].n * e.rate;
  }
  total_[l] = sum;
  sorted_end_[l] = static_cast<std::uint32_t>(solved.size());
  solved.insert(solved.end(), joiners.begin(), joiners.end());
  list_[l] = std::move(solved);
}

bool FairShare::in_cover(ClassId c, ResourceId l) const {
  const auto& cover = cover_[l];
  for (ResourceId k : route(c)) {
    if (std::find(cover.begin(), cover.end(), k) != cover.end()) {
      return true;
    }
  }
  return false;
}

// True when `c` crosses a link of the cover of safe link `l`, or one can be added to it.
bool FairShare::covered(ClassId c, ResourceId l) {
  if (in_cover(c, l)) {
    return true;
  }
  ResourceId best = l;
  for (ResourceId k : route(c)) {
    if (k != l && tight(k) && (best == l || capacity_[k] < capacity_[best])) {
      best = k;
    }
  }
  double sum = best == l ? capacity_[l] + 1 : capacity_[best];
  for (ResourceId k : cover_[l]) {
    sum += capacity_[k];
  }
  if (sum > capacity_[l]) {
    return false;
  }
  cover_[l].push_back(best);
  return true;
}

// Builds a cover of `l`: tight links, crossed by its classes, whose capacities add up to at
// most l's. Each class proposes the link of its route that covers most classes of `l` per
// unit of capacity; the proposals go in, best first, while they fit. Returns the number of
// classes left uncovered: with none, the cover bounds l's load whatever the rates.
std::uint32_t FairShare::certify(ResourceId l) {
  ++epoch_;
  for (ClassId c : classes_on_[l]) {
    for (ResourceId k : route(c)) {
      if (link_seen_[k] != epoch_) {
        link_seen_[k] = epoch_;
        left_[k] = 0;
      }
      left_[k] += 1;
    }
  }
  const auto score = [&](ResourceId k) { return left_[k] / capacity_[k]; };
  std::vector<ResourceId> proposed;
  for (ClassId c : classes_on_[l]) {
    ResourceId best = l;
    for (ResourceId k : route(c)) {
      if (k != l && tight(k) && (best == l || score(k) > score(best))) {
        best = k;
      }
    }
    if (best != l) {
      proposed.push_back(best);
    }
  }
  std::sort(proposed.begin(), proposed.end(), [&](ResourceId a, ResourceId b) {
    return score(a) != score(b) ? score(a) > score(b) : a < b;
  });
  proposed.erase(std::unique(proposed.begin(), proposed.end()), proposed.end());
  auto& cover = cover_[l];
  cover.clear();
  double sum = 0;
  for (ResourceId k : proposed) {
    if (sum + capacity_[k] <= capacity_[l]) {
      cover.push_back(k);
      sum += capacity_[k];
    }
  }
  std::uint32_t uncovered = 0;
  for (ClassId c : classes_on_[l]) {
    uncovered += in_cover(c, l) ? 0U : 1U;
  }
  return uncovered;
}

// A free link whose uncovered classes have all gone may become safe.
void FairShare::unblock(ResourceId l) {
  blockers_[l] = certify(l);
  if (blockers_[l] == 0) {
    set_free(l, false);
    state_[l] = Link::Safe;
  }
}

// Link `l` no longer limits anyone (a solve left it well below capacity): it leaves every
// signature, and groups that now have the same signature and the same rate merge.
void FairShare::demote(ResourceId l, Time now) {
  for (const Entry& e : list_[l]) {
    drop_entry(e.g);
  }
  list_[l].clear();
  sorted_end_[l] = 0;
  total_[l] = 0;
  ++stats_.demotions;
  blockers_[l] = certify(l);
  if (blockers_[l] == 0) {
    state_[l] = Link::Safe;
  } else {
    set_free(l, true);
  }
  regroup(l, now);
}

void FairShare::regroup(ResourceId l, Time now) {
  ++epoch_;
  std::vector<GroupId> crossing;
  for (ClassId c : classes_on_[l]) {
    const GroupId g = classes_[c].group;
    if (groups_[g].seen != epoch_) {
      groups_[g].seen = epoch_;
      crossing.push_back(g);
    }
  }
  std::vector<ResourceId> links;
  for (GroupId g : crossing) {
    if (!groups_[g].alive) {
      continue;  // merged into an earlier one
    }
    links.clear();
    for (ResourceId k : sig(groups_[g])) {
      if (k != l) {
        links.push_back(k);
      }
    }
    HOPSIM_ASSERT(!links.empty(), "group {} lost its last tight link {}", g, l);
    unmap_sig(g);
    const auto begin = static_cast<std::uint32_t>(sig_pool_.size());
    sig_pool_.insert(sig_pool_.end(), links.begin(), links.end());
    const GroupId other = find_group(begin, static_cast<std::uint32_t>(links.size()));
    sig_pool_.resize(begin);
    if (other != kNone && other != g && groups_[other].alive && groups_[other].solved &&
        groups_[g].solved && groups_[other].rate == groups_[g].rate) {
      const bool keep_other = members_[other].size >= members_[g].size;
      if (!keep_other) {
        set_sig(g, links);
      }
      merge(keep_other ? g : other, keep_other ? other : g, now);
    } else {
      set_sig(g, links);
    }
  }
}

// Moves the classes of `from` into `into` (same tight links, same rate). `from` stays as a
// ghost until its list entries are rewritten: they keep the lists' loads right meanwhile.
void FairShare::merge(GroupId from, GroupId into, Time now) {
  ++stats_.merges;
  settle(from, now);
  settle(into, now);
  const double shift = groups_[from].work - groups_[into].work;
  for (ClassId c = members_[from].first; c != kNoClass;) {
    const ClassId next = classes_[c].next;
    classes_[c].offset += shift;
    add_member(into, c);
    c = next;
  }
  groups_[into].n += groups_[from].n;
  groups_[into].layout = ++layouts_;
  groups_[from].layout = ++layouts_;
  members_[from].first = kNoClass;
  members_[from].size = 0;
  groups_[from].free = 0;
  groups_[from].alive = false;
  touch(from);
  touch(into);
}

}  // namespace hopsim::sim
