// The executor: dependencies, streams, not-before times, transfers.
#include <vector>

#include <doctest/doctest.h>

#include "sim/executor.hpp"
#include "doctest_time.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using hopsim::sim::Executor;
using hopsim::sim::FlowNetwork;
using hopsim::sim::ResourceId;
using hopsim::sim::Simulator;
using hopsim::sim::TaskId;

TEST_CASE("an after chain of transfers adds up") {
  // Three 1 MB transfers in a chain on a 100 GB/s link with 1 us latency:
  // each takes 1 us + 10 us, so the last ends at 33 us.
  Simulator sim;
  FlowNetwork net(sim, {Bandwidth::gigabytes_per_s(100)});
  Executor ex(sim, net);
  const ResourceId route[] = {0};
  TaskId prev = ex.add_transfer(route, Bytes{1'000'000}, Time::us(1));
  for (int i = 0; i < 2; ++i) {
    const TaskId t = ex.add_transfer(route, Bytes{1'000'000}, Time::us(1));
    ex.add_dependency(prev, t);
    prev = t;
  }
  ex.launch();
  sim.run();
  CHECK(ex.times(0).end == Time::us(11));
  CHECK(ex.times(1).start == Time::us(11));
  CHECK(ex.times(2).end.count_ps() == Time::us(33).count_ps());
  CHECK(ex.tasks_done() == 3);
}

TEST_CASE("a stream runs one compute task at a time") {
  Simulator sim;
  FlowNetwork net(sim, {Bandwidth{1}});
  Executor ex(sim, net);
  const TaskId a = ex.add_compute(0, Time::us(5));
  const TaskId b = ex.add_compute(0, Time::us(3));
  const TaskId c = ex.add_compute(1, Time::us(4));  // another stream: runs alongside
  const TaskId d = ex.add_compute(1, Time::us(1));
  ex.add_dependency(a, d);  // d waits for a, although its stream is free at 4 us
  ex.launch();
  sim.run();
  CHECK(ex.times(a).end == Time::us(5));
  CHECK(ex.times(b).start == Time::us(5));
  CHECK(ex.times(b).end == Time::us(8));
  CHECK(ex.times(c).end == Time::us(4));
  CHECK(ex.times(d).ready == Time::us(5));
  CHECK(ex.times(d).end == Time::us(6));
}

TEST_CASE("not_before delays a task and a dependency cycle leaves tasks stuck") {
  Simulator sim;
  FlowNetwork net(sim, {Bandwidth{1}});
  Executor ex(sim, net);
  const TaskId a = ex.add_compute(0, Time::us(1));
  ex.set_not_before(a, Time::us(10));
  const TaskId b = ex.add_compute(0, Time::us(1));
  const TaskId c = ex.add_compute(0, Time::us(1));
  ex.add_dependency(b, c);
  ex.add_dependency(c, b);
  ex.launch();
  sim.run();
  CHECK(ex.times(a).start == Time::us(10));
  CHECK(ex.stuck() == std::vector<TaskId>{b, c});
}

TEST_CASE("a delay takes its time without holding a stream") {
  Simulator sim;
  FlowNetwork net(sim, {Bandwidth{1}});
  Executor ex(sim, net);
  const TaskId a = ex.add_compute(0, Time::us(5));
  const TaskId d = ex.add_delay(Time::us(2));
  const TaskId b = ex.add_compute(0, Time::us(1));
  ex.add_dependency(d, b);
  ex.launch();
  sim.run();
  CHECK(ex.times(d).end == Time::us(2));
  CHECK(ex.times(a).end == Time::us(5));
  CHECK(ex.times(b).start == Time::us(5));  // the stream was busy with a until 5 us
}

TEST_CASE("a stream runs its tasks in issue order, not in the order they become ready") {
  // a is issued first but waits 10 us for a delay; b is ready at 0 but issued after a on the
  // same stream, so it runs after a, as a kernel waits for earlier kernels on its CUDA stream.
  Simulator sim;
  FlowNetwork net(sim, {Bandwidth{1}});
  Executor ex(sim, net);
  const TaskId wait = ex.add_delay(Time::us(10));
  const TaskId a = ex.add_compute(0, Time::us(2));
  const TaskId b = ex.add_compute(0, Time::us(3));
  const TaskId c = ex.add_compute(1, Time::us(1));  // another stream is not held up
  ex.add_dependency(wait, a);
  ex.launch();
  sim.run();
  CHECK(ex.times(b).ready == Time{});
  CHECK(ex.times(a).start == Time::us(10));
  CHECK(ex.times(b).start == Time::us(12));
  CHECK(ex.times(b).end == Time::us(15));
  CHECK(ex.times(c).end == Time::us(1));
}
