// DualPipe: each rank's order covers every micro-batch of both directions once, every deferred
// weight part runs, and the simulated step has the bubble of the DualPipe paper's closed form.
#include <map>
#include <set>
#include <tuple>

#include "doctest_time.hpp"
#include "workloads/step/dualpipe.hpp"
#include "workloads/step/training_step_parts.hpp"
#include "workloads/plan/runner.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

// A DualPipe of p ranks, m micro-batches, every stage F forward, B full backward (input part
// B - W, weight part W), a pair P; no communication. Returns the step and whether all ran.
Time step(int p, int m, Time f, Time b, Time w, Time pair) {
  topo::Spec spec;
  spec.nodes = 2;
  spec.nvlink = {Bandwidth::gigabytes_per_s(400), Time::ns(700)};
  spec.nic = {Bandwidth::gigabytes_per_s(50), Time::ns(500)};
  const topo::Cluster cluster(spec);
  DualPipeSpec s;
  for (int r = 0; r < p; ++r) {
    s.gpus.emplace_back(r);
  }
  s.micro_batches = m;
  const auto n = static_cast<std::size_t>(p);
  s.forward.assign(n, f);
  s.backward.assign(n, b);
  s.backward_input.assign(n, b - w);
  s.weight.assign(n, w);
  s.pair.assign(n * n, pair);
  Plan plan;
  add_dualpipe(plan, s);
  const Outcome out = simulate(cluster, plan);
  REQUIRE(out.stuck.empty());
  return out.makespan;
}

}  // namespace

TEST_CASE("dualpipe order: both directions' micro-batches, forward and backward, once each") {
  for (const auto& [p, m] : {std::pair{2, 4}, std::pair{4, 8}, std::pair{4, 20}, std::pair{8, 16},
                             std::pair{8, 40}}) {
    const auto order = dualpipe_order(p, m);
    REQUIRE(order.size() == static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
      std::set<std::tuple<int, int, bool>> seen;  // (direction, micro-batch, forward)
      std::multiset<std::pair<int, int>> deferred;
      for (const DualOp& op : order[static_cast<std::size_t>(r)]) {
        switch (op.work) {
          case DualWork::Forward:
            CHECK(seen.insert({op.direction, op.micro_batch, true}).second);
            break;
          case DualWork::Backward:
            CHECK(seen.insert({op.direction, op.micro_batch, false}).second);
            break;
          case DualWork::BackwardInput:
            CHECK(seen.insert({op.direction, op.micro_batch, false}).second);
            deferred.insert({op.direction, op.micro_batch});
            break;
          case DualWork::Weight: {  // after its input part, once
            const auto it = deferred.find({op.direction, op.micro_batch});
            REQUIRE(it != deferred.end());
            deferred.erase(it);
            break;
          }
          case DualWork::Pair:
            CHECK(seen.insert({op.direction, op.micro_batch, true}).second);
            CHECK(seen.insert({op.pair_direction, op.pair_micro_batch, false}).second);
            break;
        }
      }
      CHECK(deferred.empty());
      CHECK(seen.size() == static_cast<std::size_t>(2 * m));  // m/2 per direction, fwd and bwd
    }
  }
  CHECK_FALSE(check_dualpipe(3, 12, "/x").empty());
  CHECK_FALSE(check_dualpipe(4, 6, "/x").empty());
  CHECK(check_dualpipe(4, 8, "/x").empty());
}

TEST_CASE("dualpipe step: the paper's bubble (PP/2 - 1)(F&B + B - 3W), less at most one F") {
  // DeepSeek-V3 Table 2 gives DualPipe's bubble as (PP/2 - 1)(F&B + B - 3W), F&B an overlapped
  // forward and backward pair. With F&B = F + B every rank computes m (F + B) (m/2 forwards
  // and backwards of each direction); the rest of the simulated step is its bubble, which
  // comes out at most one forward below the paper's count. 1F1B over the same stages idles
  // (PP - 1)(F + B).
  const Time f = Time::us(1000);
  const Time b = Time::us(2000);
  for (const Time w : {Time::us(0), Time::us(300), Time::us(600), Time::us(900)}) {
    for (const auto& [p, m] : {std::pair{4, 8}, std::pair{4, 16}, std::pair{8, 16},
                               std::pair{8, 32}}) {
      INFO("p " << p << " m " << m << " W " << w.seconds());
      const Time busy = Time::ps(m * (f + b).count_ps());
      const Time bubble = step(p, m, f, b, w, f + b) - busy;
      const Time paper = Time::ps((p / 2 - 1) * (f + b + b - w - w - w).count_ps());
      CHECK(bubble <= paper);
      CHECK(bubble >= paper - f);
      CHECK(bubble < Time::ps((p - 1) * (f + b).count_ps()));
    }
  }
  // An overlapped pair shorter than F + B shortens the step.
  CHECK(step(8, 32, f, b, Time::us(600), Time::us(2500)) <
        step(8, 32, f, b, Time::us(600), f + b));
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
