// Flows that start when others finish (dependency chains, staggered starts), beside traffic
// that runs from time 0: every finish time against the per-flow reference (flow_reference.hpp),
// which re-solves every rate from scratch at every event.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "doctest_time.hpp"
#include "flow_reference.hpp"
#include "uneven_case.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using hopsim::sim::ResourceId;
using hopsim::test::RefCase;
using hopsim::test::RefFlow;

namespace {

// Random routes on `resources` links of random capacities; about a third of the flows wait
// for an earlier flow's finish (chains of any length form), the rest start on a coarse grid
// (so that starts coincide with each other and with finishes).
RefCase random_chains(std::uint64_t seed, int flows, int resources) {
  std::mt19937_64 rng(seed);
  RefCase c;
  for (int r = 0; r < resources; ++r) {
    c.capacity.push_back(
        Bandwidth::gigabytes_per_s(std::uniform_real_distribution(1.0, 100.0)(rng)));
  }
  for (int i = 0; i < flows; ++i) {
    RefFlow f;
    const auto len = static_cast<std::size_t>(1 + rng() % 4);
    while (f.route.size() < len) {
      const auto r = static_cast<ResourceId>(rng() % static_cast<std::uint64_t>(resources));
      if (std::find(f.route.begin(), f.route.end(), r) == f.route.end()) {
        f.route.push_back(r);
      }
    }
    // One flow in 20 moves no bytes: it releases its successors after its latency alone.
    f.size = Bytes{rng() % 20 == 0 ? 0 : static_cast<std::int64_t>(1'000 + rng() % 5'000'000)};
    f.latency = Time::ns(static_cast<std::int64_t>(rng() % 3) * 700);
    if (i > 0 && rng() % 3 == 0) {
      f.after = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(i));
      f.start = Time::ns(static_cast<std::int64_t>(rng() % 3) * 1'000);  // 0: at the finish
    } else {
      f.start = Time::ns(static_cast<std::int64_t>(rng() % 100) * 500);
    }
    c.flows.push_back(std::move(f));
  }
  return c;
}

// Mixed traffic: an uneven all-to-all-v among all GPUs and, beside it, rings over the first
// GPU of each node (chained: step k+1 of a ring leaves a GPU once step k has reached it),
// their first steps staggered.
RefCase mixed(std::uint64_t seed, int nodes, int gpus, int steps) {
  RefCase c = hopsim::test::uneven_all_to_all(seed, nodes, gpus, false);
  std::mt19937_64 rng(seed + 1);
  const auto ring_gpu = [gpus](int k) { return k * gpus; };
  std::vector<std::int64_t> last(static_cast<std::size_t>(nodes), -1);  // step into a GPU
  for (int step = 0; step < steps; ++step) {
    std::vector<std::int64_t> now(last.size());
    for (int k = 0; k < nodes; ++k) {
      RefFlow f;
      const int to = (k + 1) % nodes;
      f.route = hopsim::test::rail_route(gpus, ring_gpu(k), ring_gpu(to));
      f.size = Bytes{(std::int64_t{1} << 18) + static_cast<std::int64_t>(rng() % (1U << 19))};
      f.latency = Time::ns(2'500);
      f.after = last[static_cast<std::size_t>(k)];
      f.start = f.after < 0 ? Time::ns(static_cast<std::int64_t>(rng() % 30'000)) : Time{};
      now[static_cast<std::size_t>(to)] = static_cast<std::int64_t>(c.flows.size());
      c.flows.push_back(std::move(f));
    }
    last = now;
  }
  return c;
}

// Worst |network - reference| over all flows, relative to the reference finish time, after
// one picosecond (both round up to whole picoseconds, maybe on either side of a boundary).
double worst_relative(const std::vector<Time>& got, const std::vector<Time>& want) {
  double worst = 0;
  for (std::size_t f = 0; f < want.size(); ++f) {
    REQUIRE(got[f] != Time::max());
    REQUIRE(want[f] != Time::max());
    const double off = std::max(std::fabs((got[f] - want[f]).seconds()) - 1e-12, 0.0);
    worst = std::max(worst, off / std::max(want[f].seconds(), 1e-9));
  }
  return worst;
}

}  // namespace

TEST_CASE("dependency chains: every finish time matches a per-flow reference to 1e-9 + 1 ps") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    const RefCase c = random_chains(seed * 7727, 160, 10);
    const auto got = hopsim::test::network_finish(c);
    CHECK(worst_relative(got, hopsim::test::reference_finish(c)) <= 1e-9);
  }
}

TEST_CASE("mixed traffic: chained rings beside an all-to-all-v match the reference") {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    CAPTURE(seed);
    const RefCase c = mixed(seed, 3 + static_cast<int>(seed % 2), 4, 6);
    const auto got = hopsim::test::network_finish(c);
    CHECK(worst_relative(got, hopsim::test::reference_finish(c)) <= 1e-9);
  }
}
