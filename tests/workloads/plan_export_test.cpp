// A plan written as a Chakra trace carries its GPUs' speeds: a slow GPU's kernels are exported
// as long as the runner runs them, so a replay on the healthy cluster computes as slowly.
#include "workloads/trace/plan_export.hpp"

#include <vector>

#include <doctest/doctest.h>

#include "workloads/plan/runner.hpp"

using namespace hopsim::work;
namespace topo = hopsim::topo;
using hopsim::Time;

namespace {

// The exported duration of every compute node (kernels and holds) of a rank, in file order.
std::vector<Time> kernel_times(const ExportedPlan& e, std::size_t rank) {
  std::vector<Time> out;
  for (const EtNode& n : e.trace.ranks.at(rank).nodes) {
    if (n.type == EtNodeType::Compute && !n.cpu) {
      out.push_back(n.duration);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("exported kernels take their GPU's speed, as the runner runs them, holds keep theirs") {
  topo::Spec spec;
  spec.nodes = 1;
  spec.gpus_per_node = 2;
  topo::Perturbation slow;
  slow.gpus = {1};
  slow.compute_speed = 0.4;  // 100 us -> 250 us
  spec.perturbations = {slow};
  const ComputeSpeeds speeds(spec, {});
  Plan plan;
  plan.add_compute(topo::GpuId{0}, Time::us(100));
  const PlanTaskId kernel = plan.add_compute(topo::GpuId{1}, Time::us(100));
  plan.add_hold(topo::GpuId{1}, Time::us(50), 0, kComputeStream);  // after the kernel
  plan.add_flow(topo::GpuId{0}, topo::GpuId{1}, hopsim::Bytes{1000});

  const ExportedPlan healthy = export_plan(plan);
  CHECK(kernel_times(healthy, 0) == std::vector<Time>{Time::us(100)});
  CHECK(kernel_times(healthy, 1) == std::vector<Time>{Time::us(100), Time::us(50)});

  const ExportedPlan perturbed = export_plan(plan, &speeds);
  CHECK(kernel_times(perturbed, 0) == std::vector<Time>{Time::us(100)});
  CHECK(kernel_times(perturbed, 1) == std::vector<Time>{Time::us(250), Time::us(50)});
  CHECK(time_on_gpu(&speeds, plan.tasks()[kernel], kernel) == Time::us(250));

  // The runner takes the same time for it: GPU 1 computes 250 us, then holds 50 us.
  const topo::Cluster cluster(spec);
  const Outcome ran = simulate(cluster, plan, {.speeds = &speeds});
  CHECK(ran.makespan >= Time::us(300));
  CHECK(ran.makespan < Time::us(310));
}
