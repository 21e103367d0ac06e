// Flow network: which flows finish when, per group of classes that share a rate.
#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/assert.hpp"
#include "sim/flow_network.hpp"

namespace hopsim::sim {

void FlowNetwork::collect_finished() {
  // Completions due now, plus those due within the next picosecond: flows whose exact finish
  // times are equal but round to neighbouring picoseconds then finish in one batch.
  const Time now = sim_.now();
  due_.clear();
  completions_.pop_until(now + Time::ps(1), due_);
  // Approximate mode: the groups whose earliest flow is within the tolerance of its end (they
  // never cause a wake of their own) may join the batch. Such a flow finishes now only if its
  // end is nearer now than the next wake, else at that wake: rounded to the nearest wake, so
  // that about as many flows end late as early. (Ending every flow at the first wake within
  // its reach ends most of them early, the long ones by nearly their whole tolerance.) The
  // next wake is the earliest completion of a group out of reach now.
  reach_.clear();
  while (!early_.empty() && early_.key(early_.top()) <= now) {
    const GroupId g = early_.pop();
    reach_.emplace_back(g, completions_.contains(g) ? completions_.key(g) : Time::max());
    completions_.erase(g);
  }
  early_horizon_s_ = std::numeric_limits<double>::infinity();
  if (tolerance_ > 0 && !completions_.empty()) {
    early_horizon_s_ = (completions_.key(completions_.top()) - now).seconds() / 2;
  }
  for (const auto& [at, g] : due_) {
    if (finish_due(g, at <= now)) {
      mark_refresh(g);
    } else {
      completions_.set(g, at);  // due a picosecond from now after all: keep waiting
    }
  }
  for (const auto& [g, late] : reach_) {
    if (late != Time::max()) {
      completions_.set(g, late);  // until schedule_completion moves it
    }
    if (share_.alive(g)) {
      finish_due(g, false);
    }
    mark_refresh(g);
    const GroupHead* head = share_.alive(g) ? top_head(g) : nullptr;
    if (head != nullptr && head->key - share_.group_work(g, now) <= slack(head->flow)) {
      early_.set(g, now);  // within reach but nearer the next wake: looked at again then
    }
  }
  std::sort(finished_.begin(), finished_.end());
}

// Finishes the flows of group `g` that are done, earliest first: the earliest one if it is
// due now, and every flow within a picosecond's worth of bytes of its end (approximate mode:
// plus half `tolerance_` of its size, either side; see schedule_completion).
bool FlowNetwork::finish_due(GroupId g, bool due_now) {
  const double work = share_.group_work(g, sim_.now());
  bool forced = due_now;
  bool any = false;
  while (const GroupHead* head = top_head(g)) {
    const ClassId c = head->cls;
    const std::int64_t done = finish_class(c, work + share_.offset(c), forced);
    if (done == 0) {
      break;
    }
    forced = false;
    any = true;
    heads_[g].top_layout = 0;  // its earliest flow is gone
    share_.change(c, -done, sim_.now());
    if (!share_.alive(g)) {
      break;
    }
    if (share_.group_of(c) == g) {
      push_head(g, c);
    }
  }
  return any;
}

// Finishes the flows of class `c` (whose work is `work`) that are done; the first one
// regardless when `forced`. Returns how many.
std::int64_t FlowNetwork::finish_class(ClassId c, double work, bool forced) {
  const double rate = share_.rate(share_.group_of(c));
  const double picosecond = rate * 1e-12 * (1 + 1e-6);
  const double horizon = early_horizon_s_ * rate;  // bytes in half the time to the next wake
  auto& pending = pending_[c];
  std::int64_t done = 0;
  while (!pending.empty()) {
    const auto [target, f] = pending.front();
    const double reach = std::min(slack(f), horizon);  // exact mode: 0
    if (!forced && target - work > picosecond + reach) {
      break;
    }
    snapped_ += std::fabs(target - work) > picosecond ? 1 : 0;
    forced = false;
    std::pop_heap(pending.begin(), pending.end(), std::greater<>{});
    pending.pop_back();
    flows_[f].state = Flow::State::Done;
    finished_.push_back(f);
    ++done;
  }
  return done;
}

GroupHeads& FlowNetwork::heads_of(GroupId g) {
  if (g >= heads_.size()) {
    heads_.resize(std::max<std::size_t>(g + 1, 2 * heads_.size()));
  }
  return heads_[g];
}

void FlowNetwork::push_head(GroupId g, ClassId c) {
  if (g >= heads_.size()) {
    return;
  }
  GroupHeads& heads = heads_[g];
  const GroupHead head{pending_[c].front().first - share_.offset(c), c, pending_[c].front().second};
  const std::uint64_t layout = share_.layout(g);
  if (heads.top_layout == layout && head.key < heads.top.key) {
    heads.top = head;  // the cached earliest flow stays right: only a finish can raise it
  }
  if (heads.heap != kNoHeap && class_heaps_[heads.heap].layout == layout &&
      share_.member_count(g) >= 2) {
    auto& heap = class_heaps_[heads.heap].heap;
    heap.push_back(head);
    std::push_heap(heap.begin(), heap.end(), std::greater<>{});
  }
}

// The earliest flow of group `g` (nullptr when it has none), cached until a flow of the group
// finishes or its layout changes.
const GroupHead* FlowNetwork::top_head(GroupId g) {
  GroupHeads& heads = heads_of(g);
  const std::uint64_t layout = share_.layout(g);
  if (heads.top_layout == layout) {
    return &heads.top;
  }
  const GroupHead* top = find_top(g);
  if (top != nullptr) {
    heads.top = *top;
    heads.top_layout = layout;
    return &heads.top;
  }
  return nullptr;
}

// Finds the earliest flow of group `g` from its class heap, rebuilt first if the group's
// layout changed, stale entries dropped. A lone class needs no heap.
const GroupHead* FlowNetwork::find_top(GroupId g) {
  GroupHeads& heads = heads_[g];
  if (share_.member_count(g) < 2) {
    if (heads.heap != kNoHeap) {
      class_heaps_[heads.heap].layout = 0;
    }
    const ClassId c = share_.first_member(g);
    if (c == FairShare::kNoClass || pending_[c].empty()) {
      return nullptr;
    }
    heads.top =
        GroupHead{pending_[c].front().first - share_.offset(c), c, pending_[c].front().second};
    return &heads.top;
  }
  if (heads.heap == kNoHeap) {
    heads.heap = static_cast<std::uint32_t>(class_heaps_.size());
    class_heaps_.emplace_back();
  }
  ClassHeap& heap_of = class_heaps_[heads.heap];
  auto& heap = heap_of.heap;
  if (heap_of.layout != share_.layout(g)) {
    heap.clear();
    for (ClassId c = share_.first_member(g); c != FairShare::kNoClass; c = share_.next_member(c)) {
      heap.push_back(
          GroupHead{pending_[c].front().first - share_.offset(c), c, pending_[c].front().second});
    }
    std::make_heap(heap.begin(), heap.end(), std::greater<>{});
    heap_of.layout = share_.layout(g);
  }
  while (!heap.empty()) {
    const GroupHead& top = heap.front();
    if (share_.group_of(top.cls) == g && !pending_[top.cls].empty() &&
        pending_[top.cls].front().second == top.flow) {
      return &top;
    }
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    heap.pop_back();
  }
  return nullptr;
}

void FlowNetwork::schedule_completion(GroupId g) {
  if (!share_.alive(g)) {
    completions_.erase(g);
    early_.erase(g);
    return;
  }
  const Time now = sim_.now();
  const double rate = share_.rate(g);
  HOPSIM_ASSERT(rate > 0, "group {} got rate {}", g, rate);
  const GroupHead* head = top_head(g);
  HOPSIM_ASSERT(head != nullptr, "group {} has no flow", g);
  GroupHeads& heads = heads_[g];
  // Approximate mode: half the tolerance is spent on the rate drifting from the one the
  // entries were computed for (no heap update then), half on batching: due when it has moved
  // its size and half the tolerance more, early once half is left. Together a flow finishes
  // within the tolerance of its size, either side.
  if (tolerance_ > 0 && heads.scheduled_flow == head->flow && heads.scheduled_key == head->key &&
      std::fabs(rate - heads.scheduled_rate) <= tolerance_ / 2 * heads.scheduled_rate) {
    return;
  }
  heads.scheduled_key = head->key;
  heads.scheduled_flow = head->flow;
  heads.scheduled_rate = rate;
  const double left = head->key - share_.group_work(g, now);
  if (tolerance_ == 0) {
    completions_.defer(g, now + Time::from_seconds_ceil(std::max(left, 0.0) / rate));
    return;
  }
  if (heads.slack_flow != head->flow) {  // a flow's slack is its own: cached per group
    heads.slack_flow = head->flow;
    heads.slack = slack(head->flow);
  }
  completions_.defer(g, now + Time::from_seconds_ceil(std::max(left + heads.slack, 0.0) / rate));
  early_.defer(g, now + Time::from_seconds_ceil(std::max(left - heads.slack, 0.0) / rate));
}

}  // namespace hopsim::sim
