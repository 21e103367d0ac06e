// An independent reference for the flow network, for tests: per-flow progressive filling
// recomputed from scratch at every event (no classes, no groups, nothing incremental), in the
// same picosecond steps and with the same completion rule as the network.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "sim/flow_network.hpp"

namespace hopsim::test {

struct RefFlow {
  std::vector<sim::ResourceId> route;
  Bytes size;
  Time start;
  Time latency;
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
  for (;;) {
    Time next = Time::max();
    for (std::size_t f = 0; f < n; ++f) {
      const Time join = c.flows[f].start + c.flows[f].latency;
      if (finish[f] == Time::max() && !active[f] && join <= now) {
        active[f] = c.flows[f].size.n > 0;
        left[f] = static_cast<double>(c.flows[f].size.n);
        finish[f] = active[f] ? Time::max() : now;
      } else if (finish[f] == Time::max() && !active[f]) {
        next = std::min(next, join);
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

/// An uneven all-to-all-v on `nodes` x `gpus` GPUs wired like a rail-optimized cluster with
/// PXN: per GPU an NVLink up and down (ids 4g, 4g+1) and a NIC up and down (4g+2, 4g+3); a
/// pair on different nodes and rails goes over NVLink to the source node's GPU on the
/// destination's rail first. Capacities, sizes (U(0.5, 1.5) x 1 MiB) and, when `staggered`,
/// start times are drawn from `seed`.
inline RefCase uneven_all_to_all(std::uint64_t seed, int nodes, int gpus, bool staggered) {
  std::mt19937_64 rng(seed);
  const auto draw = [&rng](std::uint64_t n) { return static_cast<std::int64_t>(rng() % n); };
  RefCase c;
  const double nvlink = 200 + static_cast<double>(draw(300));
  const double nic = 25 + static_cast<double>(draw(75));
  for (int g = 0; g < nodes * gpus; ++g) {
    for (double gbps : {nvlink, nvlink, nic, nic}) {
      c.capacity.push_back(Bandwidth::gigabytes_per_s(gbps));
    }
  }
  const auto link = [](int g, int k) { return static_cast<sim::ResourceId>(4 * g + k); };
  for (int s = 0; s < nodes * gpus; ++s) {
    for (int d = 0; d < nodes * gpus; ++d) {
      if (s == d) {
        continue;
      }
      RefFlow f;
      const int entry = (s / gpus) * gpus + d % gpus;  // the source node's GPU on d's rail
      if (s / gpus == d / gpus) {
        f.route = {link(s, 0), link(d, 1)};
      } else if (entry == s) {
        f.route = {link(s, 2), link(d, 3)};
      } else {
        f.route = {link(s, 0), link(entry, 1), link(entry, 2), link(d, 3)};
      }
      f.size = Bytes{(std::int64_t{1} << 19) + draw(std::uint64_t{1} << 20)};
      f.start = staggered ? Time::ns(draw(20'000)) : Time{};
      f.latency = Time::ns(static_cast<std::int64_t>(700 * f.route.size()) + 1'900);
      c.flows.push_back(std::move(f));
    }
  }
  return c;
}

/// Runs `c` on the flow network (with `tolerance`) and returns each flow's finish time.
inline std::vector<Time> network_finish(const RefCase& c, double tolerance = 0) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim, c.capacity);
  net.set_tolerance(tolerance);
  std::vector<Time> finish(c.flows.size(), Time::max());
  std::vector<std::size_t> case_of;  // flow ids follow start order, not case order
  net.set_on_finish([&](sim::FlowId f) { finish[case_of[f]] = sim.now(); });
  for (std::size_t i = 0; i < c.flows.size(); ++i) {
    sim.schedule_at(c.flows[i].start, [&net, &c, &case_of, i] {
      net.start(c.flows[i].route, c.flows[i].size, c.flows[i].latency);
      case_of.push_back(i);
    });
  }
  sim.run();
  return finish;
}

}  // namespace hopsim::test
