// Fair share: the incremental solve. Find the lowest level a change can reach, re-fill the
// groups at or above it that the change connects to, check the links left out, commit.
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "sim/assert.hpp"
#include "sim/fair_share.hpp"

namespace hopsim::sim {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Levels are compared with this relative margin, far above rounding (1e-16), far below what
// a test could see (1e-9): a group whose rate is within it of the level is re-filled too.
constexpr double kLevelMargin = 1e-9;
// A link that is not a constraint may end up loaded to capacity times 1 + this (rounding).
constexpr double kOverload = 1e-12;
// A tight link stops being one when a solve leaves it loaded below this share of its
// capacity: it limits nobody then (any share < 1 would be exact); well below 1 so that a link
// does not flip back and forth while the flows near its capacity come and go.
constexpr double kDemoteBelow = 0.5;
constexpr std::uint32_t kDemoteAfter = 3;

// Restores the order of a min-heap (std::greater, as std::make_heap makes it) whose top's key
// grew: one pass down, where popping it and pushing it back would take two. Each link is in
// the heap once, so (share, link) orders the entries totally: the links come out in the same
// order whichever way the heap is kept.
void sift_top(std::vector<std::pair<double, ResourceId>>& heap) {
  const std::size_t n = heap.size();
  const auto node = heap.front();
  std::size_t at = 0;
  for (;;) {
    std::size_t child = 2 * at + 1;
    if (child >= n) {
      break;
    }
    if (child + 1 < n && heap[child + 1] < heap[child]) {
      ++child;
    }
    if (!(heap[child] < node)) {
      break;
    }
    heap[at] = heap[child];
    at = child;
  }
  heap[at] = node;
}

}  // namespace

void FairShare::solve(Time now) {
  if (changed_.empty()) {
    return;
  }
  for (;;) {
    rebuild_stale();
    collect_region(lowest_level() * (1 - kLevelMargin));
    fill();
    if (verify()) {
      break;
    }
    ++stats_.redos;
    for (ResourceId p : violated_) {
      promote(p);  // a link left out would be overloaded: make it a constraint and redo
    }
  }
  commit(now);
  compact_sigs();
  free_groups_.insert(free_groups_.end(), released_.begin(), released_.end());
  released_.clear();
}

// The lowest level at which the max-min filling can differ from the last one: the old rate
// of every group whose flow count changed, and the level at which a link whose weight grew
// would now saturate.
double FairShare::lowest_level() {
  double level = kInfinity;
  for (GroupId g : changed_) {
    if (groups_[g].solved) {
      level = std::min(level, groups_[g].rate);
    }
  }
  const double changed_floor = level;
  ++epoch_;
  for (GroupId g : changed_) {
    const Group& group = groups_[g];
    if (!group.grew || !group.alive) {
      continue;
    }
    for (ResourceId l : sig(group)) {
      if (link_seen_[l] != epoch_) {
        link_seen_[l] = epoch_;
        level = std::min(level, join_level(l, changed_floor));
      }
    }
  }
  return level;
}

// Solves  before(k) + w * level = C  from the top of the sorted list down: the groups below k
// move at their old rates (all <= level), the groups from k up and the joiners at `level`.
// Every changed group (rate >= changed_floor) is taken at its new count, above k; groups
// above k that move slower than `level` count as if at `level`, which only lowers it.
double FairShare::join_level(ResourceId l, double changed_floor) const {
  const auto& list = list_[l];
  const std::uint32_t end = sorted_end_[l];
  double w = 0;
  for (std::size_t i = end; i < list.size(); ++i) {
    w += groups_[list[i].g].n;
  }
  for (std::uint32_t k = end;; --k) {
    const double before = k < end ? list[k].before : total_[l];
    if (k == 0 || list[k - 1].rate < changed_floor * (1 - kLevelMargin)) {
      if (w <= 0) {
        return kInfinity;
      }
      const double level = (capacity_[l] - before) / w;
      if (k == 0 || list[k - 1].rate <= level) {
        return level;
      }
    }
    w += groups_[list[k - 1].g].n;
  }
}

// The region: every group at or above `floor` connected to a changed group through tight
// links, found from the top of each link's sorted list.
void FairShare::collect_region(double floor) {
  ++epoch_;
  region_links_.clear();
  region_groups_.clear();
  for (GroupId g : changed_) {
    for (ResourceId l : sig(groups_[g])) {
      if (link_seen_[l] != epoch_) {
        link_seen_[l] = epoch_;
        region_links_.push_back(l);
      }
    }
  }
  for (std::size_t i = 0; i < region_links_.size(); ++i) {
    if (i + 2 < region_links_.size()) {
      // The scan below starts at the top of a list not read since the last solve touched it.
      const ResourceId ahead = region_links_[i + 2];
      const std::uint32_t top = sorted_end_[ahead];
      if (top > 0) {
        __builtin_prefetch(&list_[ahead][top - 1]);
        __builtin_prefetch(&list_[ahead][top > 3 ? top - 4 : 0]);
      }
    }
    const ResourceId l = region_links_[i];
    const auto& list = list_[l];
    // The first sorted entry at or above the floor, found from the top: the entries passed
    // are the region's part of the list, read next anyway (a binary search over a long list
    // costs a cache miss and a mispredicted branch per step).
    const std::uint32_t end = sorted_end_[l];
    std::uint32_t s = end;
    while (s > 0 && list[s - 1].rate >= floor) {
      --s;
    }
    start_[l] = s;
    left_[l] = capacity_[l] - (s != end ? list[s].before : total_[l]);
    double w = 0;
    std::uint32_t alive = 0;
    bool solo = true;
    for (std::size_t j = s; j < list.size(); ++j) {
      if (j + share::kPrefetch < list.size()) {
        prefetch(list[j + share::kPrefetch].g);
      }
      const GroupId g = list[j].g;
      const Group& group = groups_[g];
      if (!group.alive) {
        continue;
      }
      w += group.n;
      ++alive;
      solo = solo && group.sig_size == 1;
      if (group.seen != epoch_) {
        groups_[g].seen = epoch_;
        groups_[g].fixed = false;
        region_groups_.push_back(g);
        for (ResourceId k : sig(group)) {
          if (link_seen_[k] != epoch_) {
            link_seen_[k] = epoch_;
            region_links_.push_back(k);
          }
        }
      }
    }
    weight_[l] = w;
    alive_on_[l] = alive;
    solo_[l] = solo ? 1 : 0;
  }
  stats_.groups_solved += region_groups_.size();
}

// Progressive filling of the region on what the groups below the floor leave: the link with
// the smallest fair share saturates next; shares only grow, so a lazy heap finds it.
// A link whose groups cross no other tight link saturates at its share whatever the others
// do: its groups are fixed at once, at the share the heap would have found (their entries in
// order_ come first, which changes no list's order: only its own groups are on it).
void FairShare::fill() {
  order_.clear();
  to_verify_.clear();
  heap_.clear();
  for (ResourceId l : region_links_) {
    if (weight_[l] > 0) {
      const double share = std::max(left_[l], 0.0) / weight_[l];
      if (solo_[l] != 0) {
        fix_on(l, share);
      } else {
        heap_.emplace_back(share, l);
      }
    }
  }
  std::make_heap(heap_.begin(), heap_.end(), std::greater<>{});
  while (!heap_.empty()) {
    const auto [key, l] = heap_.front();
    if (weight_[l] > 0) {
      const double share = std::max(left_[l], 0.0) / weight_[l];
      if (share > key) {
        heap_.front().first = share;  // stale: its share grew since it went in
        sift_top(heap_);
        continue;
      }
    }
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    heap_.pop_back();
    if (weight_[l] > 0) {  // else every group on it was fixed by other links
      fix_on(l, key);
    }
  }
  HOPSIM_ASSERT(order_.size() == region_groups_.size(), "the filling fixed {} of {} groups",
                order_.size(), region_groups_.size());
}

// Link `l` saturates at level `key`: its groups not fixed yet get that rate.
void FairShare::fix_on(ResourceId l, double key) {
  const auto& list = list_[l];
  for (std::size_t j = start_[l]; j < list.size(); ++j) {
    if (j + share::kPrefetch < list.size()) {
      prefetch(list[j + share::kPrefetch].g);
    }
    const GroupId g = list[j].g;
    Group& group = groups_[g];
    if (!group.alive || (group.seen == epoch_ && group.fixed)) {
      continue;
    }
    group.seen = epoch_;
    group.fixed = true;
    group.new_rate = key;
    order_.push_back(g);
    if (group.free != 0 && key != group.rate) {
      to_verify_.push_back(g);  // its free links see its rate change
    }
    for (ResourceId k : sig(group)) {
      left_[k] -= key * group.n;
      weight_[k] -= group.n;
    }
  }
}

// The links that are not constraints must stay within capacity at the new rates; those that
// would not are listed in violated_.
bool FairShare::verify() {
  violated_.clear();
  delta_links_.clear();
  for (GroupId g : to_verify_) {
    const Group& group = groups_[g];
    const double d = group.new_rate - group.rate;
    for (ClassId c = members_[g].first; c != kNoClass; c = classes_[c].next) {
      if (classes_[c].free == 0) {
        continue;
      }
      for (ResourceId l : route(c)) {
        if (state_[l] != Link::Free) {
          continue;
        }
        if (delta_seen_[l] != epoch_) {
          delta_seen_[l] = epoch_;
          delta_[l] = 0;
          delta_links_.push_back(l);
        }
        delta_[l] += classes_[c].n * d;
      }
    }
  }
  for (ResourceId l : delta_links_) {
    if (load_[l] + delta_[l] > capacity_[l] * (1 - 1e-6) &&
        exact_load(l, true) > capacity_[l] * (1 + kOverload)) {
      violated_.push_back(l);
    }
  }
  return violated_.empty();
}

// The new rates take effect, and the re-filled groups, in increasing rate order, become the
// new top of each of their links' lists (with the load below each entry, summed as they go).
void FairShare::commit(Time now) {
  for (ResourceId l : delta_links_) {
    load_[l] += delta_[l];
  }
  for (ResourceId l : region_links_) {
    rewrite_begin(l);
  }
  for (std::size_t i = 0; i < order_.size(); ++i) {
    if (i + share::kPrefetch < order_.size()) {
      prefetch(order_[i + share::kPrefetch]);
    }
    const GroupId g = order_[i];
    Group& group = groups_[g];
    if (group.rate != group.new_rate || !group.solved) {
      ++stats_.groups_changed;
      // touch(g) and settle(g, now), written out: they are out of line, and this runs for
      // every re-filled group.
      if (group.touched != solve_id_) {
        group.touched = solve_id_;
        touched_.push_back(g);
      }
      if (now > group.work_time) {
        group.work = group.work + group.rate * (now - group.work_time).seconds();
      }
      group.work_time = now;
      group.rate = group.new_rate;
      group.solved = true;
    }
    const double load = group.n * group.rate;
    for (ResourceId l : sig(group)) {
      list_[l][written_[l]++] = Entry{group.rate, weight_[l], g};
      weight_[l] += load;
    }
  }
  for (GroupId g : changed_) {
    touch(g);
    groups_[g].changed = false;
    groups_[g].grew = false;
  }
  changed_.clear();
  for (ResourceId l : region_links_) {
    rewrite_end(l);
  }
  for (ResourceId l : region_links_) {
    if (!tight(l) || total_[l] >= kDemoteBelow * capacity_[l]) {
      idle_[l] = {};
      continue;
    }
    // Demoting costs about one step per class on the link; it pays once solves through the
    // idle link have re-filled that many groups, over a few solves (not one burst).
    idle_[l].work += alive_on_[l];
    if (++idle_[l].solves >= kDemoteAfter && idle_[l].work >= classes_on_[l].size()) {
      idle_[l] = {};
      demote(l, now);
    }
  }
}

// Drops the old entries from the region's start on; weight_ keeps the load below it.
void FairShare::rewrite_begin(ResourceId l) {
  auto& list = list_[l];
  const std::uint32_t s = start_[l];
  weight_[l] = s < sorted_end_[l] ? list[s].before : total_[l];
  if (s + alive_on_[l] == list.size()) {
    written_[l] = s;  // collect_region found no entry of a gone group there
    return;
  }
  for (std::size_t j = s; j < list.size(); ++j) {
    if (j + share::kPrefetch < list.size()) {
      prefetch(list[j + share::kPrefetch].g);
    }
    if (!groups_[list[j].g].alive) {
      drop_entry(list[j].g);
    }
  }
  list.resize(s + alive_on_[l]);
  written_[l] = s;
}

void FairShare::rewrite_end(ResourceId l) {
  auto& list = list_[l];
  HOPSIM_ASSERT(written_[l] == list.size(), "link {}: {} of {} entries written", l, written_[l],
                list.size());
  total_[l] = weight_[l];
  sorted_end_[l] = static_cast<std::uint32_t>(list.size());
}

}  // namespace hopsim::sim
