// Max-min fair flow network: classes, incremental regions, progressive filling, completions.
#include "sim/flow_network.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace hopsim::sim {

std::size_t FlowNetwork::RouteHash::operator()(
    const std::pair<std::uint32_t, std::uint32_t>& key) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL ^ key.second;
  for (std::uint32_t i = 0; i < key.second; ++i) {
    h ^= (*pool)[key.first + i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return static_cast<std::size_t>(h);
}

bool FlowNetwork::RouteEq::operator()(const std::pair<std::uint32_t, std::uint32_t>& a,
                                      const std::pair<std::uint32_t, std::uint32_t>& b) const {
  return a.second == b.second && std::equal(pool->begin() + a.first,
                                            pool->begin() + a.first + a.second,
                                            pool->begin() + b.first);
}

FlowNetwork::FlowNetwork(Simulator& sim, std::vector<Bandwidth> capacities)
    : sim_(sim),
      class_of_route_(64, RouteHash{&route_pool_}, RouteEq{&route_pool_}) {
  capacity_.reserve(capacities.size());
  for (std::size_t r = 0; r < capacities.size(); ++r) {
    HOPSIM_ASSERT(capacities[r].bytes_per_s > 0, "resource {} has capacity {} B/s, must be > 0",
                  r, capacities[r].bytes_per_s);
    capacity_.push_back(capacities[r].bytes_per_s);
  }
  const std::size_t n = capacity_.size();
  on_resource_.resize(n);
  dirty_stamp_.assign(n, 0);
  res_seen_.assign(n, 0);
  res_left_.assign(n, 0);
  res_weight_.assign(n, 0);
}

FlowId FlowNetwork::start(std::span<const ResourceId> route, Bytes size, Time latency) {
  HOPSIM_ASSERT(!route.empty(), "flow {} has an empty route", flows_.size());
  HOPSIM_ASSERT(size.n >= 0, "flow {} has negative size {}", flows_.size(), size.n);
  HOPSIM_ASSERT(latency >= Time{}, "flow {} has negative latency", flows_.size());
  HOPSIM_ASSERT(flows_.size() < kNoClass, "too many flows");
  const auto id = static_cast<FlowId>(flows_.size());
  flows_.push_back(Flow{intern(route), 0.0, size, Flow::State::Latency});
  if (size.n == 0) {
    sim_.schedule_in(latency, [this, id] { finish_zero_byte(id); });
  } else {
    sim_.schedule_in(latency, [this, id] { join(id); });
  }
  return id;
}

FlowNetwork::ClassId FlowNetwork::intern(std::span<const ResourceId> route) {
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
  Class c;
  c.route_begin = begin;
  c.route_size = size;
  classes_.push_back(std::move(c));
  cls_seen_.push_back(0);
  cls_fixed_.push_back(0);
  return it->second;
}

void FlowNetwork::settle(Class& c) const {
  const Time now = sim_.now();
  if (c.active > 0 && now > c.work_time) {
    c.work += c.rate * (now - c.work_time).seconds();
  }
  c.work_time = now;
}

void FlowNetwork::finish_zero_byte(FlowId f) {
  flows_[f].state = Flow::State::Done;
  if (on_finish_) {
    on_finish_(f);
  }
}

void FlowNetwork::join(FlowId f) {
  Flow& flow = flows_[f];
  Class& c = classes_[flow.cls];
  settle(c);
  flow.target = c.work + static_cast<double>(flow.size.n);
  flow.state = Flow::State::Active;
  c.pending.emplace_back(flow.target, f);
  std::push_heap(c.pending.begin(), c.pending.end(), std::greater<>{});
  c.head_changed = c.head_changed || c.pending.front().second == f;
  if (c.active++ == 0) {
    activate(flow.cls);
  }
  mark_dirty(flow.cls);
  arm();
}

void FlowNetwork::activate(ClassId id) {
  const Class& c = classes_[id];
  for (std::uint32_t i = 0; i < c.route_size; ++i) {
    auto& list = on_resource_[route_pool_[c.route_begin + i]];
    route_pos_[c.route_begin + i] = static_cast<std::uint32_t>(list.size());
    list.push_back(id);
  }
}

void FlowNetwork::deactivate(ClassId id) {
  Class& c = classes_[id];
  c.rate = 0;
  c.work = 0;  // no flow refers to it any more: restart from 0 to keep the numbers small
  ++c.version;
  for (std::uint32_t i = 0; i < c.route_size; ++i) {
    const ResourceId r = route_pool_[c.route_begin + i];
    auto& list = on_resource_[r];
    const std::uint32_t pos = route_pos_[c.route_begin + i];
    const ClassId moved = list.back();
    list[pos] = moved;
    list.pop_back();
    if (moved != id) {
      const Class& m = classes_[moved];
      for (std::uint32_t k = 0; k < m.route_size; ++k) {
        if (route_pool_[m.route_begin + k] == r) {
          route_pos_[m.route_begin + k] = pos;
          break;
        }
      }
    }
  }
}

void FlowNetwork::mark_dirty(ClassId id) {
  for (ResourceId r : route_of(classes_[id])) {
    if (dirty_stamp_[r] != dirty_epoch_) {
      dirty_stamp_[r] = dirty_epoch_;
      dirty_.push_back(r);
    }
  }
}

void FlowNetwork::arm() {
  if (in_wake_) {
    return;  // wake() re-arms once it is done
  }
  while (!completions_.empty() &&
         completions_.top().version != classes_[completions_.top().cls].version) {
    completions_.pop();
  }
  Time next = completions_.empty() ? Time::max() : completions_.top().at;
  if (!dirty_.empty()) {
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
  solve_dirty();
  in_wake_ = false;
  arm();
}

void FlowNetwork::collect_finished() {
  // Completions due now, plus those due within the next picosecond: flows whose exact finish
  // times are equal but round to neighbouring picoseconds then finish in one batch.
  const Time now = sim_.now();
  due_.clear();
  while (!completions_.empty() && completions_.top().at <= now + Time::ps(1)) {
    due_.push_back(completions_.top());
    completions_.pop();
  }
  for (const Completion& e : due_) {
    Class& c = classes_[e.cls];
    if (e.version != c.version) {
      continue;
    }
    settle(c);
    const double tolerance = c.rate * 1e-12 * (1 + 1e-6);
    bool any = false;
    while (!c.pending.empty() &&
           ((e.at <= now && !any) || c.pending.front().first - c.work <= tolerance)) {
      std::pop_heap(c.pending.begin(), c.pending.end(), std::greater<>{});
      const FlowId f = c.pending.back().second;
      c.pending.pop_back();
      flows_[f].state = Flow::State::Done;
      finished_.push_back(f);
      --c.active;
      any = true;
    }
    if (!any) {
      completions_.push(e);  // due a picosecond from now after all: keep waiting
      continue;
    }
    c.head_changed = true;
    mark_dirty(e.cls);
    if (c.active == 0) {
      deactivate(e.cls);
    }
  }
  std::sort(finished_.begin(), finished_.end());
}

void FlowNetwork::solve_dirty() {
  if (dirty_.empty()) {
    return;
  }
  ++epoch_;
  for (ResourceId seed : dirty_) {
    if (res_seen_[seed] != epoch_ && !on_resource_[seed].empty()) {
      collect_region(seed);
      fill_region();
    }
  }
  dirty_.clear();
  ++dirty_epoch_;
  ++solves_;
  if (on_solve_) {
    on_solve_();
  }
}

void FlowNetwork::collect_region(ResourceId seed) {
  region_res_.clear();
  region_cls_.clear();
  res_seen_[seed] = epoch_;
  region_res_.push_back(seed);
  for (std::size_t i = 0; i < region_res_.size(); ++i) {
    for (ClassId id : on_resource_[region_res_[i]]) {
      if (cls_seen_[id] == epoch_) {
        continue;
      }
      cls_seen_[id] = epoch_;
      region_cls_.push_back(id);
      for (ResourceId r : route_of(classes_[id])) {
        if (res_seen_[r] != epoch_) {
          res_seen_[r] = epoch_;
          region_res_.push_back(r);
        }
      }
    }
  }
}

void FlowNetwork::fill_region() {
  old_rate_.clear();
  for (ClassId id : region_cls_) {
    settle(classes_[id]);
    old_rate_.push_back(classes_[id].rate);
  }
  std::vector<std::pair<double, ResourceId>>& heap = share_heap_;  // reused: no allocation
  heap.clear();
  for (ResourceId r : region_res_) {
    double weight = 0;
    for (ClassId id : on_resource_[r]) {
      weight += classes_[id].active;
    }
    res_left_[r] = capacity_[r];
    res_weight_[r] = weight;
    heap.emplace_back(capacity_[r] / weight, r);
  }
  std::make_heap(heap.begin(), heap.end(), std::greater<>{});
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
    const auto [key, r] = heap.back();
    heap.pop_back();
    if (res_weight_[r] <= 0) {
      continue;  // every class on it was fixed by other resources
    }
    const double share = std::max(res_left_[r], 0.0) / res_weight_[r];
    if (share > key) {
      heap.emplace_back(share, r);  // shares only grow: re-insert with the current one
      std::push_heap(heap.begin(), heap.end(), std::greater<>{});
      continue;
    }
    const double rate = std::max(share, key);  // never below a share it already had
    for (ClassId id : on_resource_[r]) {
      if (cls_fixed_[id] == epoch_) {
        continue;
      }
      cls_fixed_[id] = epoch_;
      Class& c = classes_[id];
      c.rate = rate;
      for (ResourceId l : route_of(c)) {
        res_left_[l] -= rate * c.active;
        res_weight_[l] -= c.active;
      }
    }
  }
  // A class whose rate and first-to-finish flow are unchanged keeps its completion entry:
  // re-pushing every class of a large region would flood the heap with stale entries.
  for (std::size_t i = 0; i < region_cls_.size(); ++i) {
    Class& c = classes_[region_cls_[i]];
    if (c.head_changed || c.rate != old_rate_[i]) {
      c.head_changed = false;
      schedule_completion(region_cls_[i]);
    }
  }
  classes_solved_ += region_cls_.size();
}

void FlowNetwork::schedule_completion(ClassId id) {
  Class& c = classes_[id];
  ++c.version;
  HOPSIM_ASSERT(c.rate > 0, "class {} with {} flows got rate {}", id, c.active, c.rate);
  const double remaining = std::max(c.pending.front().first - c.work, 0.0);
  completions_.push(
      Completion{sim_.now() + Time::from_seconds_ceil(remaining / c.rate), id, c.version});
}

double FlowNetwork::rate_bytes_per_s(FlowId f) const {
  const Flow& flow = flows_[f];
  return flow.state == Flow::State::Active ? classes_[flow.cls].rate : 0.0;
}

double FlowNetwork::load_bytes_per_s(ResourceId r) const {
  double load = 0;
  for (ClassId id : on_resource_[r]) {
    load += classes_[id].rate * classes_[id].active;
  }
  return load;
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
  const Class& c = classes_[flow.cls];
  const double work = c.work + c.rate * (sim_.now() - c.work_time).seconds();
  return std::max(flow.target - work, 0.0);
}

}  // namespace hopsim::sim
