// Pipeline schedules: each rank's order, and the bubble the simulation makes of it against the
// closed forms (1F1B: (p - 1) / (m + p - 1) of the step; interleaved: v times smaller).
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "doctest_time.hpp"
#include "tests/approx.hpp"
#include "tests/gpu_ids.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/step/param_prefetch.hpp"
#include "workloads/step/schedule.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

topo::Spec one_node() {
  topo::Spec spec;
  spec.nodes = 2;
  spec.nvlink = {Bandwidth::gigabytes_per_s(400), Time::ns(700)};
  spec.nic = {Bandwidth::gigabytes_per_s(50), Time::ns(500)};
  return spec;
}

std::vector<topo::GpuId> gpus(int p) {
  return hopsim::test::first_gpus(p);
}

// The step time of a pipeline with no communication, chunk times forward tf / v, backward
// tb / v (the same model cut into more chunks).
Time step(PipeSchedule s, int p, int m, int v, Time tf, Time tb, Bytes bytes = Bytes{},
          int group = 0) {
  const topo::Cluster cluster(one_node());
  Plan plan;
  PipelineSpec spec;
  spec.schedule = s;
  spec.gpus = gpus(p);
  spec.micro_batches = m;
  spec.chunks = v;
  spec.forward = Time::ps(tf.count_ps() / v);
  spec.backward = Time::ps(tb.count_ps() / v);
  spec.activation_bytes = bytes;
  spec.group = group;
  add_pipeline(plan, spec);
  const Outcome out = simulate(cluster, plan);
  REQUIRE(out.stuck.empty());
  return out.makespan;
}

}  // namespace

TEST_CASE("pipeline order: every micro-batch's forward and backward through every chunk, once") {
  for (const auto& [s, p, m, v] : {std::tuple{PipeSchedule::OneFOneB, 4, 8, 1},
                                   std::tuple{PipeSchedule::OneFOneB, 8, 3, 1},
                                   std::tuple{PipeSchedule::Interleaved, 4, 8, 2},
                                   std::tuple{PipeSchedule::Interleaved, 2, 6, 3}}) {
    CAPTURE(pipe_schedule_name(s));
    CAPTURE(p);
    CAPTURE(m);
    const auto order = pipeline_order(s, p, m, v);
    REQUIRE(order.size() == static_cast<std::size_t>(p));
    for (const std::vector<PipeOp>& ops : order) {
      CHECK(ops.size() == static_cast<std::size_t>(2 * m * v));
      std::set<std::tuple<int, int, bool>> seen;
      for (const PipeOp& op : ops) {
        CHECK(seen.insert({op.micro_batch, op.chunk, op.forward}).second);
        if (!op.forward) {  // a rank's own forward of the same chunk came first
          CHECK(seen.count({op.micro_batch, op.chunk, true}) == 1);
        }
      }
    }
    // The last rank alternates from the start (1F1B: no warm-up beyond one forward).
    if (s == PipeSchedule::OneFOneB) {
      CHECK(order.back()[0].forward);
      CHECK_FALSE(order.back()[1].forward);
    }
  }
}

TEST_CASE("1F1B with no communication: step = (m + p - 1)(tf + tb), bubble (p-1)/(m+p-1)") {
  const Time tf = Time::us(1000);
  const Time tb = Time::us(2000);
  for (const auto& [p, m] : {std::pair{4, 8}, std::pair{4, 1}, std::pair{8, 16},
                             std::pair{2, 3}}) {
    CAPTURE(p);
    CAPTURE(m);
    const Time t = step(PipeSchedule::OneFOneB, p, m, 1, tf, tb);
    CHECK(t == (m + p - 1) * (tf + tb));
    const double bubble = 1 - static_cast<double>(m) * (tf + tb).seconds() / t.seconds();
    CHECK(bubble == hopsim::test::approx(static_cast<double>(p - 1) / (m + p - 1)));
  }
}

TEST_CASE("interleaved with no communication: the bubble shrinks by the chunks per rank") {
  const Time tf = Time::us(1000);
  const Time tb = Time::us(2000);
  for (const auto& [p, m, v] : {std::tuple{4, 8, 2}, std::tuple{4, 4, 4}, std::tuple{2, 6, 3}}) {
    CAPTURE(p);
    CAPTURE(m);
    CAPTURE(v);
    const Time t = step(PipeSchedule::Interleaved, p, m, v, tf, tb);
    // Megatron's closed form: the ideal m (tf + tb) plus (p - 1)(tf + tb) / v.
    const double ideal = m * (tf + tb).seconds();
    const double expected = ideal + (p - 1) * (tf + tb).seconds() / v;
    // Each chunk's forward and backward time (tf / v, tb / v) rounds to a whole picosecond.
    CHECK(std::llabs(t.count_ps() - std::llround(expected * 1e12)) <= 2 * m * v);
    CHECK(t < step(PipeSchedule::OneFOneB, p, m, 1, tf, tb));
  }
}

TEST_CASE("pipeline: activations between ranks add their transfer to the critical path") {
  const Time tf = Time::us(1000);
  const Time tb = Time::us(2000);
  const Time free = step(PipeSchedule::OneFOneB, 4, 8, 1, tf, tb);
  const Bytes act{64 << 20};  // 64 MiB per micro-batch and stage boundary
  const Time with = step(PipeSchedule::OneFOneB, 4, 8, 1, tf, tb, act);
  CHECK(with > free);
  // Each of the 2 (p - 1) boundaries on the warm-up and cool-down path adds at least a transfer.
  const Time hop = transfer_time(act, Bandwidth::gigabytes_per_s(400));
  CHECK(with - free >= 2 * 3 * hop);
}

TEST_CASE("pipeline shapes are checked") {
  CHECK(check_pipeline(PipeSchedule::OneFOneB, 4, 8, 1, "/x").empty());
  CHECK(check_pipeline(PipeSchedule::OneFOneB, 4, 8, 2, "/x").front().message ==
        "1f1b runs 1 chunk per rank, not 2 (interleaved runs more)");
  CHECK(check_pipeline(PipeSchedule::Interleaved, 4, 6, 2, "/x").front().message ==
        "interleaved runs micro-batches in groups of the 4 stages: 6 micro-batches are not a "
        "multiple (set microbatch_group for Meta's variant, whose last group may be smaller)");
  CHECK(check_pipeline(PipeSchedule::Interleaved, 4, 8, 1, "/x").size() == 1);
  CHECK(check_pipeline(PipeSchedule::OneFOneB, 0, 8, 1, "/x").size() == 1);
}

TEST_CASE("ZeRO-3 prefetch: a pass waits for the first gather, then for whichever is longer") {
  const auto us = [](std::initializer_list<int> v) {
    std::vector<Time> out;
    for (const int x : v) {
      out.push_back(Time::us(x));
    }
    return out;
  };
  // No gathers: the layers' compute.
  CHECK(prefetched_pass(us({2, 3, 4}), us({0, 0, 0})) == Time::us(9));
  // Every gather no longer than the layer before it computes: only the first shows.
  CHECK(prefetched_pass(us({2, 3, 4}), us({1, 2, 3})) == Time::us(1 + 9));
  // Every gather longer: the gathers back to back, then the last layer.
  CHECK(prefetched_pass(us({2, 2, 2}), us({5, 5, 5})) == Time::us(15 + 2));
  // Mixed, by hand: gather 1 (3) outlasts layer 0 (2) by 1, the rest hides.
  CHECK(prefetched_pass(us({2, 2, 2}), us({1, 3, 1})) == Time::us(8));
  // Prefetch is one layer ahead: gather 2 waits for layer 1 to start even when gather 1 is
  // short, so a long gather 2 cannot hide under layer 0: it runs 11-16, layer 2 16-17.
  CHECK(prefetched_pass(us({10, 1, 1}), us({1, 1, 5})) == Time::us(17));
  CHECK(prefetched_pass({}, {}) == Time{});
}

TEST_CASE("interleaved in groups: Megatron's order at N = p, every group size finishes") {
  // N = p written out is Megatron's order.
  CHECK(pipeline_order(PipeSchedule::Interleaved, 4, 8, 2, 4) ==
        pipeline_order(PipeSchedule::Interleaved, 4, 8, 2));
  for (int p = 1; p <= 5; ++p) {
    for (int v = 2; v <= 3; ++v) {
      for (int m = 1; m <= 9; ++m) {
        for (int n = 1; n <= m + 1; ++n) {
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          CAPTURE(n);
          // Any group runs to the end (check_pipeline runs the order on its dependencies).
          REQUIRE(check_pipeline(PipeSchedule::Interleaved, p, m, v, "/x", n).empty());
          const auto order = pipeline_order(PipeSchedule::Interleaved, p, m, v, n);
          for (const std::vector<PipeOp>& ops : order) {
            CHECK(ops.size() == static_cast<std::size_t>(2 * m * v));
            std::set<std::tuple<int, int, bool>> seen;
            int in_flight = 0;
            int most = 0;
            for (const PipeOp& op : ops) {
              CHECK(seen.insert({op.micro_batch, op.chunk, op.forward}).second);
              in_flight += op.forward ? 1 : -1;
              most = std::max(most, in_flight);
            }
            // The first rank holds at most (v + 1) N + 1 chunks' activations at once.
            CHECK(most <= std::max((v + 1) * std::min(n, m) + 1, 1));
          }
        }
      }
    }
  }
}

TEST_CASE("interleaved in groups: fewer in flight, a larger bubble") {
  const Time tf = Time::us(1000);
  const Time tb = Time::us(2000);
  const auto most_in_flight = [](int group) {
    const auto order = pipeline_order(PipeSchedule::Interleaved, 4, 8, 2, group);
    int in_flight = 0;
    int most = 0;
    for (const PipeOp& op : order[0]) {
      in_flight += op.forward ? 1 : -1;
      most = std::max(most, in_flight);
    }
    return most;
  };
  // Rank 0 of p 4, v 2: Megatron's warm-up 2 (p - 1) + (v - 1) p = 10 forwards, then one more;
  // in groups of 2, (v + 1) N = 6.
  CHECK(most_in_flight(4) == 11);
  CHECK(most_in_flight(2) == 7);
  CHECK(step(PipeSchedule::Interleaved, 4, 8, 2, tf, tb, Bytes{}, 2) >
        step(PipeSchedule::Interleaved, 4, 8, 2, tf, tb, Bytes{}, 4));
  // Groups that do not divide the micro-batches: the last group is what is left.
  CHECK(check_pipeline(PipeSchedule::Interleaved, 4, 6, 2, "/x", 4).empty());
  CHECK(step(PipeSchedule::Interleaved, 4, 6, 2, tf, tb, Bytes{}, 4) > Time{});
  CHECK(check_pipeline(PipeSchedule::OneFOneB, 4, 8, 1, "/x", 2).front().message ==
        "1f1b has no micro-batch groups (microbatch_group is for interleaved)");
}
