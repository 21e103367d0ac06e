// Max-min fair flow network: flows, their targets, completion events, batches of changes.
#include "sim/flow_network.hpp"

#include <algorithm>
#include <limits>

#include "sim/assert.hpp"

namespace hopsim::sim {

namespace {

std::vector<double> checked_capacities(const std::vector<Bandwidth>& capacities) {
  std::vector<double> out;
  out.reserve(capacities.size());
  for (std::size_t r = 0; r < capacities.size(); ++r) {
    HOPSIM_ASSERT(capacities[r].bytes_per_s > 0, "resource {} has capacity {} B/s, must be > 0",
                  r, capacities[r].bytes_per_s);
    out.push_back(capacities[r].bytes_per_s);
  }
  return out;
}

}  // namespace

FlowNetwork::FlowNetwork(Simulator& sim, std::vector<Bandwidth> capacities)
    : sim_(sim), share_(checked_capacities(capacities)) {}

void FlowNetwork::set_tolerance(double relative) {
  HOPSIM_ASSERT(relative >= 0 && relative < 1, "flow tolerance {} must be in [0, 1)", relative);
  tolerance_ = relative;
}

FlowId FlowNetwork::start(std::span<const ResourceId> route, Bytes size, Time latency) {
  HOPSIM_ASSERT(!route.empty(), "flow {} has an empty route", flows_.size());
  HOPSIM_ASSERT(size.n >= 0, "flow {} has negative size {}", flows_.size(), size.n);
  HOPSIM_ASSERT(latency >= Time{}, "flow {} has negative latency", flows_.size());
  HOPSIM_ASSERT(flows_.size() < ~FlowId{0}, "too many flows");
  const auto id = static_cast<FlowId>(flows_.size());
  const ClassId cls = share_.intern(route);
  if (cls >= pending_.size()) {
    pending_.resize(cls + 1);
  }
  flows_.push_back(Flow{cls, 0.0, size, Flow::State::Latency});
  if (size.n == 0) {
    sim_.schedule_in(latency, [this, id] { finish_zero_byte(id); });
  } else {
    sim_.schedule_in(latency, [this, id] { join(id); });
  }
  return id;
}

void FlowNetwork::finish_zero_byte(FlowId f) {
  flows_[f].state = Flow::State::Done;
  if (on_finish_) {
    on_finish_(f);
  }
}

void FlowNetwork::join(FlowId f) {
  Flow& flow = flows_[f];
  const Time now = sim_.now();
  share_.change(flow.cls, 1, now);
  flow.target = share_.work(flow.cls, now) + static_cast<double>(flow.size.n);
  flow.state = Flow::State::Active;
  auto& pending = pending_[flow.cls];
  pending.emplace_back(flow.target, f);
  std::push_heap(pending.begin(), pending.end(), std::greater<>{});
  const GroupId g = share_.group_of(flow.cls);
  if (g < head_.size() && head_[g].version == share_.version(g) &&
      flow.target - share_.offset(flow.cls) < head_[g].key) {
    head_[g].key = flow.target - share_.offset(flow.cls);
    head_[g].flow = f;
  }
  mark_refresh(g);
  arm();
}

void FlowNetwork::arm() {
  if (in_wake_) {
    return;  // wake() re-arms once it is done
  }
  Time next = completions_.empty() ? Time::max() : completions_.key(completions_.top());
  if (share_.dirty()) {
    next = sim_.now();
  }
  if (next < wake_at_) {
    sim_.cancel(wake_);
    wake_at_ = next;
    wake_ = sim_.schedule_at(next, [this] { wake(); });
  }
}

void FlowNetwork::wake() {
  wake_at_ = Time::max();
  in_wake_ = true;
  collect_finished();
  for (FlowId f : finished_) {
    if (on_finish_) {
      on_finish_(f);
    }
  }
  finished_.clear();
  solve();
  in_wake_ = false;
  arm();
}

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
      head_[g].version = 0;
      mark_refresh(g);
    } else {
      completions_.set(g, at);  // due a picosecond from now after all: keep waiting
    }
  }
  // Approximate mode: groups whose earliest flow is within the tolerance of its end join the
  // batch (they never cause a wake of their own).
  while (!early_.empty() && early_.key(early_.top()) <= now) {
    const GroupId g = early_.pop();
    if (share_.alive(g) && finish_due(g, false)) {
      head_[g].version = 0;
    }
    mark_refresh(g);
  }
  std::sort(finished_.begin(), finished_.end());
}

// Finishes the flows of group `g` that are done: the earliest one if it is due now, and
// every flow within a picosecond's worth of bytes (or, approximate, `tolerance_` of its size).
bool FlowNetwork::finish_due(GroupId g, bool due_now) {
  const Time now = sim_.now();
  const double picosecond = share_.rate(g) * 1e-12 * (1 + 1e-6);
  const auto members = share_.members(g);
  members_.assign(members.begin(), members.end());
  const double group_work = share_.group_work(g, now);
  ClassId first = members_.front();
  double first_left = pending_[first].front().first - share_.offset(first);
  for (ClassId c : members_) {
    const double left = pending_[c].front().first - share_.offset(c);
    if (left < first_left || (left == first_left && c < first)) {
      first = c;
      first_left = left;
    }
  }
  bool any = false;
  for (ClassId c : members_) {
    const double work = group_work + share_.offset(c);
    auto& pending = pending_[c];
    std::int64_t done = 0;
    while (!pending.empty()) {
      const auto [target, f] = pending.front();
      const double early = tolerance_ * static_cast<double>(flows_[f].size.n);
      const bool forced = due_now && c == first && done == 0;
      if (!forced && target - work > picosecond + early) {
        break;
      }
      finished_early_ += target - work > picosecond && !forced ? 1 : 0;
      std::pop_heap(pending.begin(), pending.end(), std::greater<>{});
      pending.pop_back();
      flows_[f].state = Flow::State::Done;
      finished_.push_back(f);
      ++done;
    }
    if (done > 0) {
      share_.change(c, -done, now);
      any = true;
    }
  }
  return any;
}

void FlowNetwork::solve() {
  const bool dirty = share_.dirty();
  if (dirty) {
    share_.solve(sim_.now());
    ++solves_;
  }
  for (GroupId g : share_.touched()) {
    mark_refresh(g);
  }
  share_.clear_touched();
  for (GroupId g : refresh_) {
    schedule_completion(g);
  }
  refresh_.clear();
  ++refresh_round_;
  if (dirty && on_solve_) {
    on_solve_();
  }
}

void FlowNetwork::mark_refresh(GroupId g) {
  if (g >= refresh_mark_.size()) {
    refresh_mark_.resize(g + 1, 0);
  }
  if (refresh_mark_[g] != refresh_round_) {
    refresh_mark_[g] = refresh_round_;
    refresh_.push_back(g);
  }
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
  if (g >= head_.size()) {
    head_.resize(g + 1);
  }
  Head& head = head_[g];
  if (head.version != share_.version(g)) {
    head.key = std::numeric_limits<double>::infinity();
    for (ClassId c : share_.members(g)) {
      const auto [target, f] = pending_[c].front();
      if (target - share_.offset(c) < head.key) {
        head.key = target - share_.offset(c);
        head.flow = f;
      }
    }
    head.version = share_.version(g);
  }
  const double left = head.key - share_.group_work(g, now);
  if (tolerance_ > 0) {
    const double early = left - tolerance_ * static_cast<double>(flows_[head.flow].size.n);
    early_.set(g, now + Time::from_seconds_ceil(std::max(early, 0.0) / rate));
  }
  completions_.set(g, now + Time::from_seconds_ceil(std::max(left, 0.0) / rate));
}

double FlowNetwork::rate_bytes_per_s(FlowId f) const {
  const Flow& flow = flows_[f];
  return flow.state == Flow::State::Active ? share_.rate(share_.group_of(flow.cls)) : 0.0;
}

double FlowNetwork::remaining_bytes(FlowId f) const {
  const Flow& flow = flows_[f];
  switch (flow.state) {
    case Flow::State::Latency:
      return static_cast<double>(flow.size.n);
    case Flow::State::Done:
      return 0;
    case Flow::State::Active:
      break;
  }
  return std::max(flow.target - share_.work(flow.cls, sim_.now()), 0.0);
}

}  // namespace hopsim::sim
