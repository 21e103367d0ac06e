// Flow network: which flows finish when, per group of classes that share a rate.
#include <algorithm>
#include <limits>

#include "sim/assert.hpp"
#include "sim/flow_network.hpp"

namespace hopsim::sim {

void FlowNetwork::collect_finished() {
  // Completions due now, plus those due within the next picosecond: flows whose exact finish
  // times are equal but round to neighbouring picoseconds then finish in one batch.
  const Time now = sim_.now();
  due_.clear();
  while (!completions_.empty() && completions_.key(completions_.top()) <= now + Time::ps(1)) {
    const GroupId g = completions_.top();
    due_.emplace_back(completions_.key(g), g);
    completions_.pop();
  }
  for (const auto& [at, g] : due_) {
    if (finish_due(g, at <= now)) {
      mark_refresh(g);
    } else {
      completions_.set(g, at);  // due a picosecond from now after all: keep waiting
    }
  }
  // Approximate mode: groups whose earliest flow is within the tolerance of its end join the
  // batch (they never cause a wake of their own).
  while (!early_.empty() && early_.key(early_.top()) <= now) {
    const GroupId g = early_.pop();
    if (share_.alive(g)) {
      finish_due(g, false);
    }
    mark_refresh(g);
  }
  std::sort(finished_.begin(), finished_.end());
}

// Finishes the flows of group `g` that are done, earliest first: the earliest one if it is
// due now, and every flow within a picosecond's worth of bytes of its end (approximate mode:
// plus `tolerance_` of its size).
bool FlowNetwork::finish_due(GroupId g, bool due_now) {
  const double work = share_.group_work(g, sim_.now());
  bool forced = due_now;
  bool any = false;
  while (const Head* head = top_head(g)) {
    const ClassId c = head->cls;
    const std::int64_t done = finish_class(c, work + share_.offset(c), forced);
    if (done == 0) {
      break;
    }
    forced = false;
    any = true;
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
  const double picosecond = share_.rate(share_.group_of(c)) * 1e-12 * (1 + 1e-6);
  auto& pending = pending_[c];
  std::int64_t done = 0;
  while (!pending.empty()) {
    const auto [target, f] = pending.front();
    const double early = tolerance_ * static_cast<double>(flows_[f].size.n);
    if (!forced && target - work > picosecond + early) {
      break;
    }
    finished_early_ += !forced && target - work > picosecond ? 1 : 0;
    forced = false;
    std::pop_heap(pending.begin(), pending.end(), std::greater<>{});
    pending.pop_back();
    flows_[f].state = Flow::State::Done;
    finished_.push_back(f);
    ++done;
  }
  return done;
}

void FlowNetwork::push_head(GroupId g, ClassId c) {
  if (g >= heads_.size() || heads_[g].layout != share_.layout(g) || share_.member_count(g) < 2) {
    return;  // no heap to keep: it is (re)built when needed
  }
  auto& heap = heads_[g].heap;
  heap.push_back(Head{pending_[c].front().first - share_.offset(c), c, pending_[c].front().second});
  std::push_heap(heap.begin(), heap.end(), std::greater<>{});
}

// The earliest flow of group `g` (nullptr when it has none), from its heap, rebuilt first if
// the group's layout changed, stale entries dropped. A lone class needs no heap.
const FlowNetwork::Head* FlowNetwork::top_head(GroupId g) {
  if (share_.member_count(g) < 2) {
    if (g < heads_.size()) {
      heads_[g].layout = 0;
    }
    const ClassId c = share_.first_member(g);
    if (c == FairShare::kNoClass || pending_[c].empty()) {
      return nullptr;
    }
    lone_ = Head{pending_[c].front().first - share_.offset(c), c, pending_[c].front().second};
    return &lone_;
  }
  if (g >= heads_.size()) {
    heads_.resize(g + 1);
  }
  Heads& heads = heads_[g];
  if (heads.layout != share_.layout(g)) {
    heads.heap.clear();
    for (ClassId c = share_.first_member(g); c != FairShare::kNoClass;
         c = share_.next_member(c)) {
      heads.heap.push_back(
          Head{pending_[c].front().first - share_.offset(c), c, pending_[c].front().second});
    }
    std::make_heap(heads.heap.begin(), heads.heap.end(), std::greater<>{});
    heads.layout = share_.layout(g);
  }
  auto& heap = heads.heap;
  while (!heap.empty()) {
    const Head& top = heap.front();
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
  const Head* head = top_head(g);
  HOPSIM_ASSERT(head != nullptr, "group {} has no flow", g);
  const double left = head->key - share_.group_work(g, now);
  completions_.set(g, now + Time::from_seconds_ceil(std::max(left, 0.0) / rate));
  if (tolerance_ > 0) {
    const double early = left - tolerance_ * static_cast<double>(flows_[head->flow].size.n);
    early_.set(g, now + Time::from_seconds_ceil(std::max(early, 0.0) / rate));
  }
}

}  // namespace hopsim::sim
