// Compute beside an exchange that holds SMs: slowed for the time it runs beside one, and only then.
#include "workloads/plan/sm_sharing.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

#include "doctest_time.hpp"
#include "tests/two_nodes.hpp"
#include "workloads/plan/runner.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

constexpr SmShare kDeepSeekShare{20, 132};  // DeepSeek-V3's: DeepEP holds 20 of an H800's 132 SMs

// GPU 0 sends GPU 1 40 MB over NVLink (3.4 us + 100 us) in `exchange`'s phase while GPU `gpu`
// computes for `kernel` from `at`.
struct BesideExchange {
  Plan plan;
  PlanTaskId flow = 0;
  PlanTaskId kernel = 0;

  BesideExchange(Time kernel_time, PhaseKind exchange = PhaseKind::Dispatch, int gpu = 0,
                 Time at = {}) {
    const std::uint32_t phase = plan.phase(exchange, PhasePass::Fwd);
    const std::uint32_t experts = plan.phase(PhaseKind::Experts, PhasePass::Fwd);
    flow = plan.add_flow(topo::GpuId{0}, topo::GpuId{1}, Bytes{40'000'000}, phase);
    kernel = plan.add_compute(topo::GpuId{gpu}, kernel_time, experts);
    plan.set_not_before(kernel, at);
    plan.share_sms(kDeepSeekShare);
  }
};

// The untaxed run's flow: [0, 103.4 us).
const Time kSharedFlowEnd = Time::ns(103'400);

Time taxed_time(BesideExchange& b) {
  const topo::Cluster cluster(hopsim::test::two_nodes());
  const Outcome untaxed = simulate(cluster, b.plan);
  REQUIRE(untaxed.times[b.flow].end == kSharedFlowEnd);
  tax_beside_exchanges(b.plan, untaxed, nullptr);
  return b.plan.tasks()[b.kernel].duration;
}

std::int64_t us_in_ps(double us) { return std::llround(us * 1e6); }

}  // namespace

TEST_CASE("a kernel wholly beside an exchange that outlasts it runs on the SMs left: 132/112") {
  BesideExchange b(Time::us(10));
  // 10 us of work at 112/132 of the speed: 11.786 us, within the flow's 103.4 us.
  CHECK(std::abs(taxed_time(b).count_ps() - us_in_ps(10.0 * 132 / 112)) <= 1);
}

TEST_CASE("a kernel that outlasts the exchange is slowed only while it runs: +20/132 of it") {
  BesideExchange b(Time::us(200));
  // In the flow's 103.4 us it does 103.4 x 112/132 us of work; the rest at full speed after.
  CHECK(std::abs(taxed_time(b).count_ps() - us_in_ps(200 + 103.4 * 20 / 132)) <= 1);
}

TEST_CASE("the exchange's receiver is slowed too, a GPU outside it is not") {
  BesideExchange receiver(Time::us(10), PhaseKind::Dispatch, 1);
  CHECK(std::abs(taxed_time(receiver).count_ps() - us_in_ps(10.0 * 132 / 112)) <= 1);
  BesideExchange outside(Time::us(10), PhaseKind::Dispatch, 2);
  CHECK(taxed_time(outside) == Time::us(10));
}

TEST_CASE("a kernel after the exchange, or beside other traffic, keeps its time") {
  BesideExchange after(Time::us(10), PhaseKind::Combine, 0, Time::us(200));
  CHECK(taxed_time(after) == Time::us(10));
  BesideExchange collective(Time::us(10), PhaseKind::AllReduce);
  CHECK(taxed_time(collective) == Time::us(10));
}

TEST_CASE("a kernel starting inside the exchange is slowed for what is left of it") {
  // From 98.4 us: 5 us of the flow left, 5 x 112/132 us of work done in it, the rest after.
  BesideExchange b(Time::us(10), PhaseKind::Dispatch, 0, Time::ns(98'400));
  CHECK(std::abs(taxed_time(b).count_ps() - us_in_ps(10 + 5.0 * 20 / 132)) <= 1);
}

TEST_CASE("simulate_sharing_sms runs the taxed plan and counts both runs' events") {
  const topo::Cluster cluster(hopsim::test::two_nodes());
  BesideExchange b(Time::us(200));
  const Outcome once = simulate(cluster, b.plan);
  const Outcome both = simulate_sharing_sms(cluster, b.plan, {});
  CHECK(both.events == 2 * once.events);
  CHECK(both.times[b.kernel].end == b.plan.tasks()[b.kernel].duration);
  CHECK(std::abs(both.makespan.count_ps() - us_in_ps(200 + 103.4 * 20 / 132)) <= 1);

  Plan plain = BesideExchange(Time::us(10)).plan;
  Plan appended;
  appended.append(plain, std::vector<topo::GpuId>{topo::GpuId{0}, topo::GpuId{1}});
  CHECK(appended.sm_share() == kDeepSeekShare);  // an appended plan keeps its exchanges' SMs
  Plan none;
  none.add_compute(topo::GpuId{0}, Time::us(10));
  CHECK(simulate_sharing_sms(cluster, none, {}).makespan == Time::us(10));
}
