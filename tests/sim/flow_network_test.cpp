// The max-min flow network: closed forms, a full progressive-filling reference, invariants.
#include "sim/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "doctest_time.hpp"
#include "flow_reference.hpp"
#include "tests/approx.hpp"
#include "uneven_case.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using hopsim::sim::FlowId;
using hopsim::sim::FlowNetwork;
using hopsim::sim::ResourceId;
using hopsim::sim::Simulator;

namespace {

struct Recorder {
  std::vector<Time> finish;

  void attach(Simulator& sim, FlowNetwork& net) {
    net.set_on_finish([this, &sim](FlowId f) {
      if (f >= finish.size()) {
        finish.resize(f + 1, Time::max());
      }
      finish[f] = sim.now();
    });
  }
};

std::vector<Bandwidth> caps(std::initializer_list<double> gbps) {
  std::vector<Bandwidth> out;
  for (double g : gbps) {
    out.push_back(Bandwidth::gigabytes_per_s(g));
  }
  return out;
}

}  // namespace

TEST_CASE("a lone flow takes latency + bytes / bandwidth, exactly") {
  for (std::int64_t bytes : {1LL, 1000LL, 1LL << 20, 3LL << 30}) {
    CAPTURE(bytes);
    Simulator sim;
    FlowNetwork net(sim, caps({450}));
    Recorder rec;
    rec.attach(sim, net);
    const ResourceId route[] = {0};
    net.start(route, Bytes{bytes}, Time::ns(2'500));
    sim.run();
    CHECK(rec.finish[0] == Time::ns(2'500) + transfer_time(Bytes{bytes}, net.capacity(0)));
  }
}

TEST_CASE("k flows on one link each get 1/k, whether they share a route or not") {
  // Same route: one class of weight k. Different routes: k classes that meet on link 0.
  // Either way each flow moves at B/k and all finish at latency + k*S/B.
  for (int k : {2, 3, 8, 64}) {
    for (bool same_route : {true, false}) {
      CAPTURE(k);
      CAPTURE(same_route);
      std::vector<double> gbps(static_cast<std::size_t>(k) + 1, 1000.0);
      gbps[0] = 100;
      std::vector<Bandwidth> bw;
      for (double g : gbps) {
        bw.push_back(Bandwidth::gigabytes_per_s(g));
      }
      Simulator sim;
      FlowNetwork net(sim, bw);
      Recorder rec;
      rec.attach(sim, net);
      const Bytes size{1'000'000};
      for (int i = 0; i < k; ++i) {
        const ResourceId own = same_route ? 1 : static_cast<ResourceId>(i + 1);
        const ResourceId route[] = {0, own};
        net.start(route, size, Time::ns(100));
      }
      sim.run_until(Time::ns(100));
      CHECK(net.rate_bytes_per_s(0) == hopsim::test::approx(100e9 / k).epsilon(1e-12));
      CHECK(net.load_bytes_per_s(0) == hopsim::test::approx(100e9).epsilon(1e-12));
      sim.run();
      const Time expected = Time::ns(100) + transfer_time(Bytes{size.n * k}, net.capacity(0));
      for (int i = 0; i < k; ++i) {
        CHECK((rec.finish[static_cast<std::size_t>(i)] - expected).count_ps() <= 1);
        CHECK((expected - rec.finish[static_cast<std::size_t>(i)]).count_ps() <= 1);
      }
    }
  }
}

TEST_CASE("a flow bottlenecked on one link leaves the rest of the other to others") {
  // Links A = 10 GB/s, B = 100 GB/s. f0 crosses A and B; f1 and f2 cross B only.
  // Water-filling: A saturates first (share 10 < 100/3), so r0 = 10;
  // then B splits what is left: r1 = r2 = (100 - 10) / 2 = 45.
  Simulator sim;
  FlowNetwork net(sim, caps({10, 100}));
  const ResourceId ab[] = {0, 1};
  const ResourceId b[] = {1};
  net.start(ab, Bytes{1'000'000'000}, Time{});
  net.start(b, Bytes{1'000'000'000}, Time{});
  net.start(b, Bytes{450'000'000}, Time{});
  sim.run_until(Time{});
  CHECK(net.rate_bytes_per_s(0) == hopsim::test::approx(10e9));
  CHECK(net.rate_bytes_per_s(1) == hopsim::test::approx(45e9));
  CHECK(net.rate_bytes_per_s(2) == hopsim::test::approx(45e9));
  // f2 (450 MB at 45 GB/s) ends at 10 ms; then f1 gets 90 GB/s for its last 550 MB.
  Recorder rec;
  rec.attach(sim, net);
  sim.run();
  CHECK(rec.finish[2] == Time::us(10'000));
  const Time f1 = Time::us(10'000) + transfer_time(Bytes{550'000'000}, Bandwidth{90e9});
  CHECK(std::llabs((rec.finish[1] - f1).count_ps()) <= 1);
  CHECK(rec.finish[0] == Time::us(100'000));
}

TEST_CASE("a zero-byte flow finishes after its latency alone") {
  Simulator sim;
  FlowNetwork net(sim, caps({1}));
  Recorder rec;
  rec.attach(sim, net);
  const ResourceId route[] = {0};
  net.start(route, Bytes{0}, Time::ns(7));
  sim.run();
  CHECK(rec.finish[0] == Time::ns(7));
}

// ---- random cases against a full (global, per-flow) progressive-filling reference ----

namespace {

using Case = hopsim::test::RefCase;
using hopsim::test::reference_rates;

Case random_case(std::uint64_t seed, int flows, int resources) {
  std::mt19937_64 rng(seed);
  Case c;
  for (int r = 0; r < resources; ++r) {
    c.capacity.push_back(
        Bandwidth::gigabytes_per_s(std::uniform_real_distribution(1.0, 100.0)(rng)));
  }
  std::vector<std::vector<ResourceId>> popular;  // some routes repeat, to exercise classes
  for (int i = 0; i < flows; ++i) {
    hopsim::test::RefFlow f;
    if (!popular.empty() && rng() % 4 == 0) {
      f.route = popular[rng() % popular.size()];
    } else {
      const auto len = static_cast<std::size_t>(1 + rng() % 4);
      while (f.route.size() < len) {
        const auto r = static_cast<ResourceId>(rng() % static_cast<std::uint64_t>(resources));
        if (std::find(f.route.begin(), f.route.end(), r) == f.route.end()) {
          f.route.push_back(r);
        }
      }
      popular.push_back(f.route);
    }
    f.size = Bytes{static_cast<std::int64_t>(1'000 + rng() % 10'000'000)};
    f.start = Time::ns(static_cast<std::int64_t>(rng() % 200) * 500);  // coarse: real batches
    f.latency = Time::ns(static_cast<std::int64_t>(rng() % 3) * 700);
    c.flows.push_back(std::move(f));
  }
  return c;
}

struct Outcome {
  std::vector<Time> finish;
  std::uint64_t solves = 0;
  double worst_rate_error = 0;
  double worst_overload = 0;
  double worst_bytes_error = 0;
};

Outcome run_case(const Case& c, int check_every) {
  Simulator sim;
  FlowNetwork net(sim, c.capacity);
  const std::size_t n = c.flows.size();
  Outcome out;
  out.finish.assign(n, Time::max());
  std::vector<double> moved(n, 0), last_rate(n, 0);
  Time last = Time{};
  std::vector<std::size_t> case_of;  // flow ids follow start order, not case order
  net.set_on_finish([&](FlowId f) {
    CHECK(out.finish[case_of[f]] == Time::max());
    out.finish[case_of[f]] = sim.now();
  });
  net.set_on_solve([&] {
    const double dt = (sim.now() - last).seconds();
    CHECK(sim.now() >= last);  // time is monotone
    std::vector<bool> active(n);
    for (FlowId f = 0; f < case_of.size(); ++f) {
      const std::size_t i = case_of[f];
      moved[i] += last_rate[i] * dt;
      last_rate[i] = net.rate_bytes_per_s(f);
      active[i] = net.moving(f);
    }
    last = sim.now();
    for (ResourceId r = 0; r < net.resource_count(); ++r) {
      const double cap = net.capacity(r).bytes_per_s;
      out.worst_overload = std::max(out.worst_overload, (net.load_bytes_per_s(r) - cap) / cap);
    }
    if (++out.solves % static_cast<std::uint64_t>(check_every) == 0) {
      const std::vector<double> ref = reference_rates(c, active);
      for (std::size_t i = 0; i < n; ++i) {
        if (active[i]) {
          out.worst_rate_error =
              std::max(out.worst_rate_error, std::fabs(last_rate[i] - ref[i]) / ref[i]);
        }
      }
    }
  });
  for (std::size_t i = 0; i < n; ++i) {
    sim.schedule_at(c.flows[i].start, [&net, &c, &case_of, i] {
      net.start(c.flows[i].route, c.flows[i].size, c.flows[i].latency);
      case_of.push_back(i);
    });
  }
  sim.run();
  for (FlowId f = 0; f < n; ++f) {
    const double size = static_cast<double>(c.flows[f].size.n);
    // Each flow may finish up to 1 ps early (the completion rule): allow that many bytes.
    const double slack = 2e-12 * 100e9;
    out.worst_bytes_error = std::max(out.worst_bytes_error, std::fabs(moved[f] - size) - slack);
  }
  return out;
}

}  // namespace

TEST_CASE("the incremental solver matches a full progressive-filling reference") {
  struct Params {
    int flows, resources, check_every;
  };

  for (Params p : {Params{20, 5, 1}, Params{200, 30, 1}, Params{2'000, 60, 97}}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      CAPTURE(p.flows);
      CAPTURE(seed);
      const Case c =
          random_case(seed * 7919 + static_cast<std::uint64_t>(p.flows), p.flows, p.resources);
      const Outcome out = run_case(c, p.check_every);
      CHECK(out.worst_rate_error <= 1e-9);
      CHECK(out.worst_overload <= 1e-9);     // no link above capacity at any instant
      CHECK(out.worst_bytes_error <= 1e-3);  // bytes conserved (to a thousandth of a byte)
      for (FlowId f = 0; f < c.flows.size(); ++f) {
        CHECK(out.finish[f] != Time::max());  // every flow finishes
        const Time earliest = c.flows[f].start + c.flows[f].latency +
                              transfer_time(c.flows[f].size, Bandwidth{100e9});
        CHECK(out.finish[f] + Time::ps(1) >= earliest);  // never faster than the fastest link
      }
      CHECK(out.solves > 0);
    }
  }
}

TEST_CASE("two runs of the same input are identical") {
  const Case c = random_case(42, 500, 20);
  const Outcome a = run_case(c, 1'000'000);
  const Outcome b = run_case(c, 1'000'000);
  CHECK(a.finish == b.finish);
  CHECK(a.solves == b.solves);
}

// ---- finish times against an independent per-flow reference (tests/sim/flow_reference.hpp) ----

namespace {

struct Uneven {
  int nodes, gpus;
  bool staggered;
};

constexpr Uneven kUneven[] = {
    {2, 4, false}, {3, 4, false}, {4, 4, true}, {2, 8, false}, {3, 5, true}};

// Worst |network - reference| over all flows, relative to the reference finish time, after
// `slack` (both sides round finish times up to whole picoseconds, and may compute the same
// instant on either side of a picosecond boundary).
double worst_relative(const std::vector<Time>& got, const std::vector<Time>& want,
                      Time slack = Time{}) {
  double worst = 0;
  for (std::size_t f = 0; f < want.size(); ++f) {
    REQUIRE(got[f] != Time::max());
    const double off = std::max(std::fabs((got[f] - want[f]).seconds()) - slack.seconds(), 0.0);
    worst = std::max(worst, off / want[f].seconds());
  }
  return worst;
}

}  // namespace

TEST_CASE("uneven all-to-all-v: every finish time matches a per-flow reference to 1e-9 + 1 ps") {
  for (const Uneven u : kUneven) {
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
      CAPTURE(u.nodes);
      CAPTURE(u.gpus);
      CAPTURE(seed);
      const Case c = hopsim::test::uneven_all_to_all(seed, u.nodes, u.gpus, u.staggered);
      const auto got = hopsim::test::network_finish(c);
      CHECK(worst_relative(got, hopsim::test::reference_finish(c), Time::ps(1)) <= 1e-9);
    }
  }
}

TEST_CASE("random flows: every finish time matches a per-flow reference to 1e-9 + 1 ps") {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    const Case c = random_case(seed * 104729, 150, 12);
    const auto got = hopsim::test::network_finish(c);
    CHECK(worst_relative(got, hopsim::test::reference_finish(c), Time::ps(1)) <= 1e-9);
  }
}

// Runs `c` with `tolerance` and returns, per flow, the share of its bytes moved when it
// finished (rates integrated between solves by the observer).
std::vector<double> moved_at_finish(const Case& c, double tolerance, std::uint64_t& early) {
  Simulator sim;
  FlowNetwork net(sim, c.capacity);
  net.set_tolerance(tolerance);
  const std::size_t n = c.flows.size();
  std::vector<double> moved(n, 0), last_rate(n, 0), share(n, -1);
  Time last;
  net.set_on_finish([&](FlowId f) {
    share[f] = (moved[f] + last_rate[f] * (sim.now() - last).seconds()) /
               static_cast<double>(c.flows[f].size.n);
  });
  net.set_on_solve([&] {
    for (FlowId f = 0; f < net.flows_started(); ++f) {
      moved[f] += last_rate[f] * (sim.now() - last).seconds();
      last_rate[f] = net.rate_bytes_per_s(f);
    }
    last = sim.now();
  });
  for (const auto& f : c.flows) {  // all start at 0: flow ids follow case order
    net.start(f.route, f.size, f.latency);
  }
  sim.run();
  early += net.flows_snapped();
  return share;
}

TEST_CASE("approximate mode: a flow finishes within the tolerance of its size") {
  std::uint64_t early = 0;
  for (const double tolerance : {1e-3, 1e-2}) {
    for (const Uneven u : kUneven) {
      CAPTURE(tolerance);
      CAPTURE(u.nodes);
      CAPTURE(u.gpus);
      const Case c = hopsim::test::uneven_all_to_all(11, u.nodes, u.gpus, false);
      for (double share : moved_at_finish(c, tolerance, early)) {
        CHECK(share >= 1 - tolerance - 1e-6);  // 1e-6: a picosecond's worth of bytes
        CHECK(share <= 1 + tolerance + 1e-6);
      }
      // Not a bound (max-min rates are not monotone), a measure: within twice the tolerance.
      const std::vector<Time> exact = hopsim::test::network_finish(c);
      CHECK(worst_relative(hopsim::test::network_finish(c, tolerance), exact) <= 2 * tolerance);
    }
  }
  CHECK(early > 0);  // the tolerance was used
}

TEST_CASE("approximate mode: flows end about as often late as early, at the nearest wake") {
  // A flow within the tolerance of its end finishes at the wake nearest its end. Ending each
  // at the first wake within reach made three of four end early, the long ones by nearly all
  // of their tolerance, and the whole exchange ran fast.
  // 16,256 flows: with fewer, wakes are too far apart for most flows to have a choice.
  const Case c = hopsim::test::uneven_all_to_all(5, 16, 8, false);
  const std::vector<Time> exact = hopsim::test::network_finish(c);
  for (const double tolerance : {4e-3, 8e-3}) {
    CAPTURE(tolerance);
    const std::vector<Time> got = hopsim::test::network_finish(c, tolerance);
    double mean = 0;
    std::size_t early = 0;
    for (std::size_t f = 0; f < exact.size(); ++f) {
      const double off = (got[f] - exact[f]).seconds() / exact[f].seconds();  // all start at 0
      mean += off / static_cast<double>(exact.size());
      early += off < 0 ? 1 : 0;
    }
    CHECK(std::fabs(mean) < tolerance / 10);
    CHECK(early > exact.size() * 3 / 10);
    CHECK(early < exact.size() * 7 / 10);
  }
}
