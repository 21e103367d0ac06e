// Test cases for the flow network: an uneven all-to-all-v wired like a rail-optimized cluster,
// and a helper that runs a case on the network.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "flow_reference.hpp"
#include "sim/flow_network.hpp"

namespace hopsim::test {

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
