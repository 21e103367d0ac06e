// Test cases for the flow network: an uneven all-to-all-v wired like a rail-optimized cluster,
// and a helper that runs a case on the network.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "flow_reference.hpp"
#include "sim/flow_network.hpp"

namespace hopsim::test {

/// The route from GPU `s` to GPU `d` (nodes of `gpus` GPUs) in a rail-optimized cluster with
/// PXN: per GPU an NVLink up and down (ids 4g, 4g+1) and a NIC up and down (4g+2, 4g+3); a
/// pair on different nodes and rails goes over NVLink to the source node's GPU on the
/// destination's rail first.
inline std::vector<sim::ResourceId> rail_route(int gpus, int s, int d) {
  const auto link = [](int g, int k) { return static_cast<sim::ResourceId>(4 * g + k); };
  const int entry = (s / gpus) * gpus + d % gpus;  // the source node's GPU on d's rail
  if (s / gpus == d / gpus) {
    return {link(s, 0), link(d, 1)};
  }
  if (entry == s) {
    return {link(s, 2), link(d, 3)};
  }
  return {link(s, 0), link(entry, 1), link(entry, 2), link(d, 3)};
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
  for (int s = 0; s < nodes * gpus; ++s) {
    for (int d = 0; d < nodes * gpus; ++d) {
      if (s == d) {
        continue;
      }
      RefFlow f;
      f.route = rail_route(gpus, s, d);
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
  std::vector<std::vector<std::size_t>> waiting(c.flows.size());  // flows started by a finish
  const auto start = [&net, &c, &case_of](std::size_t i) {
    net.start(c.flows[i].route, c.flows[i].size, c.flows[i].latency);
    case_of.push_back(i);
  };
  net.set_on_finish([&](sim::FlowId f) {
    const std::size_t i = case_of[f];
    finish[i] = sim.now();
    for (std::size_t next : waiting[i]) {
      sim.schedule_in(c.flows[next].start, [&start, next] { start(next); });
    }
  });
  for (std::size_t i = 0; i < c.flows.size(); ++i) {
    if (c.flows[i].after >= 0) {
      waiting[static_cast<std::size_t>(c.flows[i].after)].push_back(i);
    } else {
      sim.schedule_at(c.flows[i].start, [&start, i] { start(i); });
    }
  }
  sim.run();
  return finish;
}

}  // namespace hopsim::test
