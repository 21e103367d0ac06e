// The event loop: ordering by (time, sequence), cancel, run_until, monotone time.
#include <vector>

#include <doctest/doctest.h>

#include "sim/simulator.hpp"

using hopsim::Time;
using hopsim::sim::Simulator;

TEST_CASE("events run in time order, ties in scheduling order") {
  Simulator sim;
  std::vector<int> order;
  sim.schedule_at(Time::ns(5), [&] { order.push_back(3); });
  sim.schedule_at(Time::ns(1), [&] { order.push_back(1); });
  sim.schedule_at(Time::ns(5), [&] { order.push_back(4); });
  sim.schedule_at(Time::ns(2), [&] { order.push_back(2); });
  sim.run();
  CHECK(order == std::vector<int>{1, 2, 3, 4});
  CHECK(sim.now() == Time::ns(5));
  CHECK(sim.events_run() == 4);
}

TEST_CASE("an event scheduled at now from a callback runs after the ones already due") {
  Simulator sim;
  std::vector<int> order;
  sim.schedule_at(Time::ns(1), [&] {
    order.push_back(1);
    sim.schedule_in(Time{}, [&] { order.push_back(3); });
  });
  sim.schedule_at(Time::ns(1), [&] { order.push_back(2); });
  sim.run();
  CHECK(order == std::vector<int>{1, 2, 3});
}

TEST_CASE("cancel is lazy and stale handles are harmless") {
  Simulator sim;
  int ran = 0;
  auto a = sim.schedule_at(Time::ns(1), [&] { ran += 1; });
  sim.schedule_at(Time::ns(2), [&] { ran += 10; });
  sim.cancel(a);
  sim.cancel(a);  // twice: no effect
  // The freed slot is reused; the old handle must not cancel the new event.
  sim.schedule_at(Time::ns(3), [&] { ran += 100; });
  sim.cancel(a);
  sim.run();
  CHECK(ran == 110);
}

TEST_CASE("run_until stops before later events and time never goes backwards") {
  Simulator sim;
  std::vector<Time> seen;
  for (int i = 0; i < 200; ++i) {
    sim.schedule_at(Time::ns((i * 7919) % 101), [&] { seen.push_back(sim.now()); });
  }
  sim.run_until(Time::ns(50));
  CHECK(sim.now() <= Time::ns(50));
  const std::size_t first = seen.size();
  sim.run();
  CHECK(seen.size() == 200);
  CHECK(first < 200);
  for (std::size_t i = 1; i < seen.size(); ++i) {
    CHECK(seen[i - 1] <= seen[i]);
  }
}
