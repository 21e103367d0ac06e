// Max-min fair flow network: flows, their targets, events, batches of changes.
#include "sim/flow_network.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace hopsim::sim {

namespace {

std::vector<double> checked_capacities(const std::vector<Bandwidth>& capacities) {
  std::vector<double> out;
  out.reserve(capacities.size());
  for (std::size_t r = 0; r < capacities.size(); ++r) {
    HOPSIM_ASSERT(capacities[r].bytes_per_s > 0, "resource {} has capacity {} B/s, must be > 0", r,
                  capacities[r].bytes_per_s);
    out.push_back(capacities[r].bytes_per_s);
  }
  return out;
}

}  // namespace

FlowNetwork::FlowNetwork(Simulator& sim, std::vector<Bandwidth> capacities)
    : sim_(sim), share_(checked_capacities(capacities)) {}

void FlowNetwork::set_on_finish(FinishCallback cb) {
  on_finish_ = std::move(cb);
}

void FlowNetwork::set_on_solve(std::function<void()> cb) {
  on_solve_ = std::move(cb);
}

double FlowNetwork::tolerance() const {
  return tolerance_;
}

std::size_t FlowNetwork::resource_count() const {
  return share_.resource_count();
}

Bandwidth FlowNetwork::capacity(ResourceId r) const {
  return {share_.capacity(r)};
}

double FlowNetwork::load_bytes_per_s(ResourceId r) const {
  return share_.load(r);
}

std::uint64_t FlowNetwork::flows_started() const {
  return flows_.size();
}

std::uint64_t FlowNetwork::solves() const {
  return solves_;
}

std::uint64_t FlowNetwork::classes_solved() const {
  return share_.stats().groups_solved;
}

const FairShareStats& FlowNetwork::solver_stats() const {
  return share_.stats();
}

std::uint64_t FlowNetwork::flows_snapped() const {
  return snapped_;
}

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
    pending_.resize(std::max<std::size_t>(cls + 1, 2 * pending_.size()));
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
  if (pending.front().second == f) {
    push_head(g, flow.cls);
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

void FlowNetwork::solve() {
  const bool dirty = share_.dirty();
  if (dirty) {
    share_.solve(sim_.now());
    ++solves_;
  }
  // Groups marked before the solve (flows joined or finished), then those the solve touched
  // that are not marked yet: each once, its state asked for ahead (the lists can be long).
  const auto touched = share_.touched();
  const std::size_t changes = refresh_.size() + touched.size();
  if (completions_.begin_batch(changes) && tolerance_ > 0) {
    early_.begin_batch(changes);
  }
  for (GroupId g : refresh_) {
    schedule_completion(g);
  }
  refresh_.clear();
  for (std::size_t i = 0; i < touched.size(); ++i) {
    if (i + 2 * share::kPrefetch < touched.size()) {
      const GroupId ahead = touched[i + 2 * share::kPrefetch];
      share_.prefetch(ahead);
      completions_.prefetch(ahead);
      early_.prefetch(ahead);
      if (ahead < heads_.size()) {
        __builtin_prefetch(&heads_[ahead]);
      }
    }
    if (i + share::kPrefetch < touched.size()) {
      completions_.prefetch_node(touched[i + share::kPrefetch]);
      early_.prefetch_node(touched[i + share::kPrefetch]);
    }
    GroupHeads& heads = heads_of(touched[i]);
    if (heads.refresh != refresh_round_) {
      heads.refresh = refresh_round_;
      schedule_completion(touched[i]);
    }
  }
  share_.clear_touched();
  completions_.end_batch();
  early_.end_batch();
  ++refresh_round_;
  if (dirty && on_solve_) {
    on_solve_();
  }
}

void FlowNetwork::mark_refresh(GroupId g) {
  GroupHeads& heads = heads_of(g);
  if (heads.refresh != refresh_round_) {
    heads.refresh = refresh_round_;
    refresh_.push_back(g);
  }
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
