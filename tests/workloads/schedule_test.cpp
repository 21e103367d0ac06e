// Pipeline schedules, every row of the table: each rank's order runs every micro-batch through
// every stage once and finishes, and the bubble the simulation makes of it matches the row's
// closed form (1F1B and ZB-H1 exactly, interleaved to the picosecond's rounding, DualPipe and
// DualPipeV within one forward of DeepSeek's count).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "doctest_time.hpp"
#include "tests/approx.hpp"
#include "tests/gpu_ids.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/step/param_prefetch.hpp"
#include "workloads/step/pipeline_layout.hpp"
#include "workloads/step/training_step_parts.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

const ScheduleRow& row(std::string_view name) {
  const ScheduleRow* r = schedule_named(name);
  REQUIRE(r != nullptr);
  return *r;
}

// Every op one compute task of a fixed time per kind, on GPU r for rank r; activations cross as
// one flow of `bytes`.
class TimedOps final : public OpSource {
 public:
  TimedOps(Plan& plan, StageOpTimes per_stage_us, Bytes bytes)
      : t_(per_stage_us),
        bytes_(bytes),
        fwd_(plan.phase(PhaseKind::PpComm, PhasePass::Fwd)),
        bwd_(plan.phase(PhaseKind::PpComm, PhasePass::Bwd)) {}

  OpTasks add_op(Plan& plan, int rank, const PipeOp& op) override {
    const double us = op.work == OpWork::Forward         ? t_.forward
                      : op.work == OpWork::Backward      ? t_.backward
                      : op.work == OpWork::BackwardInput ? t_.backward - t_.weight
                      : op.work == OpWork::Weight        ? t_.weight
                                                         : t_.pair;
    const PlanTaskId id = plan.add_compute(topo::GpuId{rank}, Time::from_seconds(us * 1e-6));
    return OpTasks{{{id, id}}};
  }

  void cross(Plan& plan, int from, int to, PlanTaskId before, PlanTaskId after,
             bool forward) override {
    if (bytes_.n == 0 || from == to) {
      plan.add_dependency(before, after);
      return;
    }
    const PlanTaskId f =
        plan.add_flow(topo::GpuId{from}, topo::GpuId{to}, bytes_, forward ? fwd_ : bwd_);
    plan.add_dependency(before, f);
    plan.add_dependency(f, after);
  }

 private:
  StageOpTimes t_;
  Bytes bytes_;
  std::uint32_t fwd_;
  std::uint32_t bwd_;
};

// The step of `r` on `s` with these per-stage times (microseconds), no communication unless
// `bytes`.
Time step(const ScheduleRow& r, PipeShape s, StageOpTimes us, Bytes bytes = Bytes{}) {
  topo::Spec spec;
  spec.nodes = 2;
  spec.nvlink = {Bandwidth::gigabytes_per_s(400), Time::ns(700)};
  spec.nic = {Bandwidth::gigabytes_per_s(50), Time::ns(500)};
  const topo::Cluster cluster(spec);
  Plan plan;
  TimedOps ops(plan, us, bytes);
  REQUIRE(check_schedule(r, s, "/x").empty());
  lay_pipeline(plan, schedule_order(r, s), r.stages(s), s.micro_batches, ops);
  const Outcome out = simulate(cluster, plan);
  REQUIRE(out.stuck.empty());
  return out.makespan;
}

// Every shape of a small grid that `r` accepts.
std::vector<PipeShape> shapes(const ScheduleRow& r) {
  std::vector<PipeShape> out;
  for (const int p : {1, 2, 3, 4, 8}) {
    for (const int m : {1, 2, 3, 4, 6, 8, 9, 16, 20}) {
      for (const int v : {1, 2, 3}) {
        const PipeShape s{p, m, v, 0};
        if (check_schedule(r, s, "/x").empty()) {
          out.push_back(s);
        }
      }
    }
  }
  return out;
}

// One order's ops, checked: per (stage, micro-batch) one forward and one input gradient over
// all ranks, a deferred weight part after its input part on the same rank, every op on a stage
// its rank holds, and every rank's saved activations back to none.
void check_order(const ScheduleRow& r, const PipeShape& s) {
  const PipeOrder order = schedule_order(r, s);
  REQUIRE(order.size() == static_cast<std::size_t>(s.ranks));
  std::set<std::pair<int, int>> forwards;
  std::set<std::pair<int, int>> inputs;
  std::set<std::pair<int, int>> weights;  // done: whole backwards and weight parts
  for (int rank = 0; rank < s.ranks; ++rank) {
    const std::vector<int> held = r.rank_stages(s, rank);
    std::set<std::pair<int, int>> deferred;
    for (const PipeOp& op : order[static_cast<std::size_t>(rank)]) {
      CHECK(std::ranges::find(held, op.stage) != held.end());
      if (const auto f = forward_of(op)) {
        CHECK(forwards.insert({f->stage, f->micro_batch}).second);
      }
      if (const auto b = input_gradient_of(op)) {
        CHECK(inputs.insert({b->stage, b->micro_batch}).second);
        if (op.work == OpWork::BackwardInput) {
          deferred.insert({b->stage, b->micro_batch});
        } else {
          CHECK(weights.insert({b->stage, b->micro_batch}).second);
        }
      }
      if (op.work == OpWork::Weight) {  // after its input part, once
        CHECK(deferred.erase({op.stage, op.micro_batch}) == 1);
        CHECK(weights.insert({op.stage, op.micro_batch}).second);
      }
    }
    CHECK(deferred.empty());
  }
  const auto all = static_cast<std::size_t>(r.stages(s) * s.micro_batches);
  CHECK(forwards.size() == all);
  CHECK(inputs.size() == all);
  CHECK(weights.size() == all);
  CHECK_FALSE(stalled_op(order, r.stages(s)));
  for (const auto& steps : activation_steps(order)) {
    int held = 0;
    for (const auto& [stage, saves] : steps) {
      held += saves ? 1 : -1;
      CHECK(held >= 0);
    }
    CHECK(held == 0);
  }
}

}  // namespace

TEST_CASE("every schedule's order runs each micro-batch through each stage once, to its end") {
  for (const ScheduleRow* r : pipe_schedules()) {
    CAPTURE(r->name);
    const std::vector<PipeShape> grid = shapes(*r);
    CHECK(grid.size() >= 5);
    for (const PipeShape& s : grid) {
      CAPTURE(s.ranks);
      CAPTURE(s.micro_batches);
      CAPTURE(s.chunks);
      check_order(*r, s);
    }
  }
  CHECK(schedule_named("zb-h2") == nullptr);
  CHECK(quoted_schedule_names() ==
        "\"1f1b\", \"interleaved\", \"zb-h1\", \"dualpipe\", \"dualpipev\", "
        "\"interleaved_ep_overlap\" or \"1f1b_ep_overlap\"");
}

TEST_CASE("1F1B with no communication: step = (m + p - 1)(tf + tb), bubble (p-1)/(m+p-1)") {
  for (const auto& [p, m] : {std::pair{4, 8}, std::pair{4, 1}, std::pair{8, 16}, std::pair{2, 3}}) {
    CAPTURE(p);
    CAPTURE(m);
    const Time t = step(row("1f1b"), {p, m, 1, 0}, {1000, 2000, 600, 3000});
    CHECK(t == (m + p - 1) * Time::us(3000));
    const double bubble = 1 - static_cast<double>(m) * 3000e-6 / t.seconds();
    CHECK(bubble == hopsim::test::approx(static_cast<double>(p - 1) / (m + p - 1)));
    CHECK(*ideal_bubble_fraction(row("1f1b"), {p, m, 1, 0}) == hopsim::test::approx(bubble));
  }
  // The last rank alternates from the start (1F1B: no warm-up beyond one forward).
  const PipeOrder order = schedule_order(row("1f1b"), {4, 8, 1, 0});
  CHECK(order.back()[0].work == OpWork::Forward);
  CHECK(order.back()[1].work == OpWork::Backward);
}

TEST_CASE("interleaved with no communication: the bubble shrinks by the chunks per rank") {
  for (const auto& [p, m, v] : {std::tuple{4, 8, 2}, std::tuple{4, 4, 4}, std::tuple{2, 6, 3}}) {
    CAPTURE(p);
    CAPTURE(m);
    CAPTURE(v);
    // A chunk's times are the 1F1B stage's over v (rounded to a picosecond).
    const Time t = step(row("interleaved"), {p, m, v, 0}, {1000.0 / v, 2000.0 / v, 0, 0});
    // Megatron's closed form: the ideal m (tf + tb) plus (p - 1)(tf + tb) / v.
    const double expected = m * 3000e-6 + (p - 1) * 3000e-6 / v;
    CHECK(std::llabs(t.count_ps() - std::llround(expected * 1e12)) <= 2 * m * v);
    CHECK(t < step(row("1f1b"), {p, m, 1, 0}, {1000, 2000, 0, 0}));
  }
}

TEST_CASE("ZB-H1 with no communication: the bubble is (p - 1)(F + B - 2W), 1F1B's memory") {
  // B is the whole backward (input part B - W). At F = B/2 = W the bubble is a third of
  // 1F1B's (p - 1)(F + B). With fewer micro-batches than ranks the deferred weight parts
  // cannot fill it: more than the closed form.
  const Time few = step(row("zb-h1"), {3, 2, 1, 0}, {1000, 2000, 1000, 0}) - 2 * Time::us(3000);
  CHECK(few > 2 * Time::us(1000));
  for (const auto& [p, m] :
       {std::pair{4, 8}, std::pair{8, 16}, std::pair{4, 4}, std::pair{8, 32}, std::pair{3, 3}}) {
    for (const double w : {1000.0, 800.0, 500.0, 0.0}) {
      CAPTURE(p);
      CAPTURE(m);
      CAPTURE(w);
      const Time t = step(row("zb-h1"), {p, m, 1, 0}, {1000, 2000, w, 0});
      const Time bubble = t - m * Time::us(3000);
      CHECK(bubble == (p - 1) * Time::from_seconds((3000 - 2 * w) * 1e-6));
    }
  }
  // Every rank holds at most p micro-batches' activations, as 1F1B's first rank does.
  for (const auto& steps : activation_steps(schedule_order(row("zb-h1"), {4, 8, 1, 0}))) {
    int held = 0;
    int most = 0;
    for (const auto& [stage, saves] : steps) {
      held += saves ? 1 : -1;
      most = std::max(most, held);
    }
    CHECK(most <= 4);
  }
}

TEST_CASE("a pair that walks its micro-batches' layers frees its backward's before its forward saves") {
  // Megatron's combined 1F1B at pp 1 (F0, B0+F1, ..., B4): listed backward first, a pair holds
  // one micro-batch at a time, as 1F1B does; listed forward first (DualPipe's), two.
  const PipeOrder order = schedule_order(row("1f1b_ep_overlap"), {1, 5, 1, 0});
  const auto most_held = [](const std::vector<std::pair<int, bool>>& steps) {
    int held = 0;
    int most = 0;
    for (const auto& [stage, saves] : steps) {
      held += saves ? 1 : -1;
      most = std::max(most, held);
      CHECK(held >= 0);
    }
    CHECK(held == 0);
    return most;
  };
  CHECK(row("1f1b_ep_overlap").pair_walks_layers);
  CHECK(row("interleaved_ep_overlap").pair_walks_layers);
  CHECK_FALSE(row("dualpipe").pair_walks_layers);
  CHECK(most_held(activation_steps(order, true).at(0)) == 1);
  CHECK(most_held(activation_steps(order, false).at(0)) == 2);
  CHECK(row("1f1b_ep_overlap").overlaps == "1f1b");
  CHECK(row("interleaved_ep_overlap").overlaps == "interleaved");
}

TEST_CASE("DualPipe and DualPipeV: the paper's bubble (PP/2 - 1)(F&B + B - 3W), less up to F") {
  // DeepSeek-V3 Table 2 gives DualPipe's bubble as (PP/2 - 1)(F&B + B - 3W), F&B an overlapped
  // forward and backward pair, PP the stages (DualPipeV's 2p stages on p ranks). With
  // F&B = F + B every rank computes its stages' m (F + B); the rest of the simulated step is
  // its bubble, at most one forward below the paper's count (it counts one more on the
  // critical path), and below 1F1B's (PP - 1)(F + B) over the same number of stages.
  for (const std::string_view name : {"dualpipe", "dualpipev"}) {
    const ScheduleRow& r = row(name);
    for (const double w : {0.0, 300.0, 600.0, 900.0}) {
      for (const auto& [p, m] :
           {std::pair{4, 8}, std::pair{4, 16}, std::pair{8, 16}, std::pair{8, 32}}) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(w);
        const PipeShape s{p, m, 1, 0};
        const StageOpTimes us{1000, 2000, w, 3000};
        const auto per_rank = static_cast<int>(r.rank_stages(s, 0).size());  // stages it holds
        const Time busy = per_rank * (m / (name == "dualpipe" ? 2 : 1)) * Time::us(3000);
        const Time bubble = step(r, s, us) - busy;
        const Time paper = Time::from_seconds(*r.bubble(s, us) * 1e-6);
        CHECK(bubble <= paper);
        CHECK(bubble >= paper - Time::us(1000));
        CHECK(bubble < (r.stages(s) - 1) * Time::us(3000));
      }
    }
    // An overlapped pair shorter than F + B shortens the step.
    CHECK(step(r, {8, 32, 1, 0}, {1000, 2000, 600, 2500}) <
          step(r, {8, 32, 1, 0}, {1000, 2000, 600, 3000}));
  }
}

TEST_CASE("pipeline: activations between ranks add their transfer to the critical path") {
  const StageOpTimes us{1000, 2000, 0, 0};
  const Time free = step(row("1f1b"), {4, 8, 1, 0}, us);
  const Bytes act{64 << 20};  // 64 MiB per micro-batch and stage boundary
  const Time with = step(row("1f1b"), {4, 8, 1, 0}, us, act);
  CHECK(with > free);
  // Each of the 2 (p - 1) boundaries on the warm-up and cool-down path adds at least a transfer.
  const Time hop = transfer_time(act, Bandwidth::gigabytes_per_s(400));
  CHECK(with - free >= 2 * 3 * hop);
}

TEST_CASE("pipeline shapes are checked, with each schedule's own words") {
  const auto first = [](std::string_view name, PipeShape s) {
    const hopsim::Problems p = check_schedule(row(name), s, "/x");
    return p.empty() ? std::string() : p.front().message;
  };
  CHECK(first("1f1b", {4, 8, 1, 0}).empty());
  CHECK(first("1f1b", {4, 8, 2, 0}) == "1f1b runs 1 chunk per rank, not 2 (interleaved runs more)");
  CHECK(first("interleaved", {4, 6, 2, 0}) ==
        "interleaved runs micro-batches in groups of the 4 stages: 6 micro-batches are not a "
        "multiple (set microbatch_group for Meta's variant, whose last group may be smaller)");
  CHECK(check_schedule(row("interleaved"), {4, 8, 1, 0}, "/x").size() == 1);
  CHECK(check_schedule(row("1f1b"), {0, 8, 1, 0}, "/x").size() == 1);
  CHECK(first("dualpipe", {3, 12, 1, 0}) ==
        "dualpipe runs an even number of pipeline ranks, at least 2; got pp 3");
  CHECK(first("dualpipe", {4, 6, 1, 0}) ==
        "dualpipe feeds micro-batches from both ends: an even number, at least 2 x pp = 8; got 6");
  CHECK(first("dualpipe", {4, 8, 2, 0}) ==
        "dualpipe holds 2 stages per rank by itself, not 2 chunks (virtual_stages 1)");
  CHECK(first("dualpipev", {4, 7, 1, 0}) ==
        "dualpipev needs at least 2 x pp = 8 micro-batches; got 7");
  CHECK(first("dualpipev", {4, 9, 1, 0}).empty());  // one direction: any count from 2p
  CHECK(first("zb-h1", {4, 8, 2, 0}) == "zb-h1 runs 1 chunk per rank, not 2 (virtual_stages 1)");
  CHECK(first("zb-h1", {4, 8, 1, 2}) ==
        "zb-h1 has no micro-batch groups (microbatch_group is for interleaved)");
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
  const ScheduleRow& r = row("interleaved");
  // N = p written out is Megatron's order.
  CHECK(schedule_order(r, {4, 8, 2, 4}) == schedule_order(r, {4, 8, 2, 0}));
  for (int p = 1; p <= 5; ++p) {
    for (int v = 2; v <= 3; ++v) {
      for (int m = 1; m <= 9; ++m) {
        for (int n = 1; n <= m + 1; ++n) {
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          CAPTURE(n);
          // Any group runs to the end (the check runs the order on its dependencies).
          REQUIRE(check_schedule(r, {p, m, v, n}, "/x").empty());
          check_order(r, {p, m, v, n});
          const PipeOrder order = schedule_order(r, {p, m, v, n});
          for (const auto& steps : activation_steps(order)) {
            int in_flight = 0;
            int most = 0;
            for (const auto& [stage, saves] : steps) {
              in_flight += saves ? 1 : -1;
              most = std::max(most, in_flight);
            }
            // A rank holds at most (v + 1) N + 1 chunks' activations at once.
            CHECK(most <= std::max((v + 1) * std::min(n, m) + 1, 1));
          }
        }
      }
    }
  }
}

TEST_CASE("interleaved in groups: fewer in flight, a larger bubble") {
  const ScheduleRow& r = row("interleaved");
  const auto most_in_flight = [&](int group) {
    int in_flight = 0;
    int most = 0;
    const auto steps = activation_steps(schedule_order(r, {4, 8, 2, group}));
    for (const auto& [stage, saves] : steps[0]) {
      in_flight += saves ? 1 : -1;
      most = std::max(most, in_flight);
    }
    return most;
  };
  // Rank 0 of p 4, v 2: Megatron's warm-up 2 (p - 1) + (v - 1) p = 10 forwards, then one more;
  // in groups of 2, (v + 1) N = 6.
  CHECK(most_in_flight(4) == 11);
  CHECK(most_in_flight(2) == 7);
  const StageOpTimes us{500, 1000, 0, 0};
  CHECK(step(r, {4, 8, 2, 2}, us) > step(r, {4, 8, 2, 4}, us));
  // Groups that do not divide the micro-batches: the last group is what is left.
  CHECK(check_schedule(r, {4, 6, 2, 4}, "/x").empty());
  CHECK(step(r, {4, 6, 2, 4}, us) > Time{});
  // No closed form for Meta's groups.
  CHECK_FALSE(ideal_bubble_fraction(r, {4, 8, 2, 2}));
}

TEST_CASE("dualpipe mixed pair: each side's exposed exchanges hide under the other's compute") {
  // A dense forward of 8 ms (no exchanges) beside a MoE backward of 26 ms, 7 of them its
  // exchanges exposed: all 7 hide, 27 ms. A MoE forward of 14 ms (5 exposed) beside a dense
  // backward of 18 ms: 5 hide, 27 ms. Both sides exposing more than the other computes: each
  // hides as much as the other side computes.
  LayerTiming dense;
  dense.forward = Time::us(8000);
  LayerTiming moe;
  moe.moe = true;
  moe.forward = Time::us(14000);
  moe.ep_exposed_forward = Time::us(5000);
  moe.ep_exposed_backward = Time::us(7000);
  using step_parts::mixed_pair;
  CHECK(mixed_pair(dense, Time::us(26000), moe) == Time::us(27000));
  CHECK(mixed_pair(moe, Time::us(18000), dense) == Time::us(27000));
  CHECK(mixed_pair(dense, Time::us(18000), dense) == Time::us(26000));  // nothing to hide
  LayerTiming thin = moe;
  thin.forward = Time::us(6000);  // computes 1 ms
  thin.ep_exposed_backward = Time::us(9000);
  // f computes 1 ms, so 1 of b's 9 ms hides; b computes 1 ms, so 1 of f's 5 ms hides.
  CHECK(mixed_pair(thin, Time::us(10000), thin) == Time::us(14000));
}
