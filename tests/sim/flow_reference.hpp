// An independent reference for the flow network, for tests: per-flow progressive filling
// recomputed from scratch at every event (no classes, no groups, nothing incremental), in the
// same picosecond steps and with the same completion rule as the network.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/flow_network.hpp"

namespace hopsim::test {

struct RefFlow {
  std::vector<sim::ResourceId> route;
  Bytes size;
  Time start;  // after the finish of flow `after`, if it has one; else after time 0
  Time latency;
  std::int64_t after = -1;  // the flow this one waits for (an earlier one), or -1
};

struct RefCase {
  std::vector<Bandwidth> capacity;
  std::vector<RefFlow> flows;
};

/// Textbook progressive filling over individual flows: raise all unfixed rates together and
/// fix the flows of the first resource to saturate, until every flow is fixed.
inline std::vector<double> reference_rates(const RefCase& c, const std::vector<bool>& active) {
  const std::size_t n = c.flows.size();
  std::vector<double> rate(n, 0);
  std::vector<bool> fixed(n, true);
  for (std::size_t f = 0; f < n; ++f) {
    fixed[f] = !active[f];
  }
  std::vector<double> left;
  for (auto b : c.capacity) {
    left.push_back(b.bytes_per_s);
  }
  for (;;) {
    std::vector<int> count(left.size(), 0);
    for (std::size_t f = 0; f < n; ++f) {
      if (!fixed[f]) {
        for (sim::ResourceId r : c.flows[f].route) {
          ++count[r];
        }
      }
    }
    std::size_t best = left.size();
    double best_share = 0;
    for (std::size_t r = 0; r < left.size(); ++r) {
      if (count[r] > 0 && (best == left.size() || left[r] / count[r] < best_share)) {
        best = r;
        best_share = left[r] / count[r];
      }
    }
    if (best == left.size()) {
      return rate;
    }
    for (std::size_t f = 0; f < n; ++f) {
      const auto& route = c.flows[f].route;
      if (!fixed[f] && std::find(route.begin(), route.end(), best) != route.end()) {
        fixed[f] = true;
        rate[f] = best_share;
        for (sim::ResourceId r : route) {
          left[r] -= best_share;
        }
      }
    }
  }
}

/// Finish time of every flow: at each event (a join or a finish), recompute all rates, move
/// every flow's bytes to the next event, finish the flows that are due or within one
/// picosecond's worth of bytes of their end (the network's completion rule).
inline std::vector<Time> reference_finish(const RefCase& c) {
  const std::size_t n = c.flows.size();
  std::vector<Time> finish(n, Time::max());
  std::vector<double> left(n);
  std::vector<bool> active(n, false);
  std::vector<Time> due(n, Time::max());
  Time now;
  // When a flow joins: its start (after its predecessor's finish, once that is known) and
  // latency; Time::max() while its predecessor runs.
  const auto join_of = [&](std::size_t f) {
    const RefFlow& flow = c.flows[f];
    if (flow.after < 0) {
      return flow.start + flow.latency;
    }
    const Time before = finish[static_cast<std::size_t>(flow.after)];
    return before == Time::max() ? Time::max() : before + flow.start + flow.latency;
  };
  for (;;) {
    Time next = Time::max();
    for (bool joined = true; joined;) {  // again while zero-byte flows release others now
      joined = false;
      next = Time::max();
      for (std::size_t f = 0; f < n; ++f) {
        const Time join = join_of(f);
        if (finish[f] == Time::max() && !active[f] && join <= now) {
          active[f] = c.flows[f].size.n > 0;
          left[f] = static_cast<double>(c.flows[f].size.n);
          finish[f] = active[f] ? Time::max() : now;
          joined = joined || !active[f];
        } else if (finish[f] == Time::max() && !active[f]) {
          next = std::min(next, join);
        }
      }
    }
    const std::vector<double> rate = reference_rates(c, active);
    for (std::size_t f = 0; f < n; ++f) {
      if (active[f]) {
        due[f] = now + Time::from_seconds_ceil(left[f] / rate[f]);
        next = std::min(next, due[f]);
      }
    }
    if (next == Time::max()) {
      return finish;
    }
    for (std::size_t f = 0; f < n; ++f) {
      if (active[f]) {
        left[f] -= rate[f] * (next - now).seconds();
        if (due[f] <= next || left[f] <= rate[f] * 1e-12 * (1 + 1e-6)) {
          active[f] = false;
          finish[f] = next;
        }
      }
    }
    now = next;
  }
}

}  // namespace hopsim::test
