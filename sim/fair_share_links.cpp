// Fair share: which links are constraints (tight), their sorted lists, and the group changes
// (splits, merges) that follow when a link becomes tight or stops being tight.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "sim/assert.hpp"
#include "sim/fair_share.hpp"

namespace hopsim::sim {

void FairShare::drop_entry(GroupId g) {
  Group& group = groups_[g];
  HOPSIM_ASSERT(group.refs > 0, "group {} drops an entry it does not hold", g);
  if (--group.refs == 0 && !group.alive) {
    release(g);
  }
}

double FairShare::exact_load(ResourceId l, bool with_new_rates) const {
  double sum = 0;
  for (ClassId c : classes_on_[l]) {
    const GroupId g = classes_[c].group;
    const bool fresh = with_new_rates && group_fixed_[g] == epoch_;
    sum += classes_[c].n * (fresh ? new_rate_[g] : groups_[g].rate);
  }
  return sum;
}

// Link `p` becomes a constraint: every group that crosses it must have it in its signature,
// so a group whose members only partly cross it splits in two (same rate, same work).
void FairShare::promote(ResourceId p) {
  if (tight_[p] != 0) {
    return;
  }
  tight_[p] = 1;
  if (std::getenv("FS_DEBUG")) std::fprintf(stderr, "  promote %u\n", p);
  ++epoch_;
  std::vector<GroupId> crossing;
  for (ClassId c : classes_on_[p]) {
    const GroupId g = classes_[c].group;
    if (group_seen_[g] != epoch_) {
      group_seen_[g] = epoch_;
      crossing.push_back(g);
    }
  }
  std::vector<ResourceId> stale;
  for (GroupId g : crossing) {
    split(g, p, stale);
  }
  rebuild(p);
  std::sort(stale.begin(), stale.end());
  stale.erase(std::unique(stale.begin(), stale.end()), stale.end());
  for (ResourceId l : stale) {
    rebuild(l);
  }
}

void FairShare::split(GroupId g, ResourceId p, std::vector<ResourceId>& stale) {
  std::vector<ResourceId> links(sig(groups_[g]).begin(), sig(groups_[g]).end());
  links.push_back(p);
  std::vector<ClassId> moving;
  for (ClassId c : groups_[g].members) {
    if (crosses(c, p)) {
      moving.push_back(c);
    }
  }
  if (moving.size() == groups_[g].members.size()) {
    unmap_sig(g);
    set_sig(g, links);
    ++groups_[g].refs;  // its entry on p, written by rebuild(p)
    return;
  }
  const GroupId h = new_group();
  Group& from = groups_[g];
  Group& part = groups_[h];
  part.rate = from.rate;
  part.work = from.work;
  part.work_time = from.work_time;
  part.solved = from.solved;
  part.grew = from.grew;
  set_sig(h, links);
  part.refs = part.sig_size;
  for (ClassId c : moving) {
    remove_member(c);
    add_member(h, c);
    part.n += classes_[c].n;
  }
  groups_[g].n -= part.n;
  if (groups_[g].changed) {
    mark_changed(h, part.grew);
  }
  const auto old = sig(groups_[g]);
  stale.insert(stale.end(), old.begin(), old.end());
  touch(g);
  touch(h);
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
    if (group_seen_[g] != epoch_) {
      group_seen_[g] = epoch_;
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

// Link `l` no longer limits anyone (it is below capacity): it leaves every signature, and
// groups that now have the same signature and the same rate merge.
void FairShare::demote(ResourceId l, Time now) {
  tight_[l] = 0;
  for (const Entry& e : list_[l]) {
    drop_entry(e.g);
  }
  list_[l].clear();
  sorted_end_[l] = 0;
  total_[l] = 0;
  load_[l] = exact_load(l, false);
  ++epoch_;
  std::vector<GroupId> crossing;
  for (ClassId c : classes_on_[l]) {
    const GroupId g = classes_[c].group;
    if (group_seen_[g] != epoch_) {
      group_seen_[g] = epoch_;
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
    const auto it = group_of_sig_.find({begin, static_cast<std::uint32_t>(links.size())});
    sig_pool_.resize(begin);
    const GroupId other = it == group_of_sig_.end() ? kNone : it->second;
    if (other != kNone && other != g && groups_[other].alive && groups_[other].solved &&
        groups_[g].solved && groups_[other].rate == groups_[g].rate) {
      const bool keep_other = groups_[other].members.size() >= groups_[g].members.size();
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
  if (std::getenv("FS_DEBUG")) std::fprintf(stderr, "  merge %u into %u\n", from, into);
  settle(from, now);
  settle(into, now);
  const double shift = groups_[from].work - groups_[into].work;
  for (ClassId c : groups_[from].members) {
    classes_[c].offset += shift;
    add_member(into, c);
  }
  groups_[into].n += groups_[from].n;
  groups_[from].members.clear();
  groups_[from].alive = false;
  touch(from);
  touch(into);
}

}  // namespace hopsim::sim
