// A plan's length without some tasks, from one simulation: replaying every task gives the
// simulated makespan back; dropping a kernel shortens the path only where it was on it.
#include "workloads/plan/critical_path.hpp"

#include <vector>

#include "doctest_time.hpp"
#include "workloads/plan/runner.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

topo::Cluster two_nodes() {
  topo::Spec spec;
  spec.nodes = 2;
  spec.nvlink = {Bandwidth::gigabytes_per_s(400), Time::ns(700)};
  spec.nic = {Bandwidth::gigabytes_per_s(50), Time::ns(500)};
  return topo::Cluster(spec);
}

}  // namespace

TEST_CASE("critical path: every task kept replays the simulated makespan") {
  // Each GPU of node 0 computes, then sends to its peer on node 1 and to GPU 8 (whose NIC the
  // flows share), whose kernels then run, each after both flows it waits for.
  const topo::Cluster cluster = two_nodes();
  Plan plan;
  for (int g = 0; g < 8; ++g) {
    const PlanTaskId k = plan.add_compute(topo::GpuId{g}, Time::us(40 + g));
    const PlanTaskId own = plan.add_flow(topo::GpuId{g}, topo::GpuId{8 + g}, Bytes{8 << 20});
    const PlanTaskId shared = plan.add_flow(topo::GpuId{g}, topo::GpuId{8}, Bytes{4 << 20});
    const PlanTaskId after = plan.add_compute(topo::GpuId{8 + g}, Time::us(30));
    for (const PlanTaskId f : {own, shared}) {
      plan.add_dependency(k, f);
      plan.add_dependency(f, after);
    }
  }
  const Outcome out = simulate(cluster, plan);
  const std::vector<char> none(plan.tasks().size(), 0);
  CHECK(makespan_without(plan, out, none) == out.makespan);
}

TEST_CASE("critical path: a dropped kernel on the path shortens it, one beside it does not") {
  // GPU 0: A (10 us), then W (5 us) on the same stream, then C (3 us), which waits for the
  // flow from GPU 8. The flow (1 MB over the NIC) starts after A.
  const topo::Cluster cluster = two_nodes();
  Plan plan;
  const PlanTaskId a = plan.add_compute(topo::GpuId{0}, Time::us(10));
  const PlanTaskId w = plan.add_compute(topo::GpuId{0}, Time::us(5));
  const PlanTaskId f = plan.add_flow(topo::GpuId{8}, topo::GpuId{0}, Bytes{1 << 20});
  const PlanTaskId c = plan.add_compute(topo::GpuId{0}, Time::us(3));
  plan.add_dependency(a, f);
  plan.add_dependency(f, c);
  const Outcome out = simulate(cluster, plan);
  const Time flow = out.times[f].end - out.times[f].start;
  std::vector<char> drop(plan.tasks().size(), 0);
  drop[w] = 1;
  // Without W, C waits for the flow alone: A + flow + C.
  CHECK(makespan_without(plan, out, drop) == Time::us(10) + flow + Time::us(3));
  // The flow (about 21 us) outlasts W (5 us): with W kept, the same.
  CHECK(flow > Time::us(5));
  CHECK(out.makespan == Time::us(10) + flow + Time::us(3));
  // Drop A instead: the flow starts at once, W runs first on the stream.
  std::vector<char> drop_a(plan.tasks().size(), 0);
  drop_a[a] = 1;
  CHECK(makespan_without(plan, out, drop_a) == flow + Time::us(3));
  // Drop the flow: C still waits for A through it, and for W before it on the stream.
  std::vector<char> drop_f(plan.tasks().size(), 0);
  drop_f[f] = 1;
  CHECK(makespan_without(plan, out, drop_f) == Time::us(10 + 5 + 3));
}
