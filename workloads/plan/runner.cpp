// Plan -> executor tasks (routes from the topology), run, collect times.
#include "workloads/plan/runner.hpp"

#include <chrono>

#include "sim/assert.hpp"

namespace hopsim::work {

Outcome simulate(const topo::Cluster& cluster, const Plan& plan) {
  const auto wall_start = std::chrono::steady_clock::now();
  std::vector<Bandwidth> capacities;
  capacities.reserve(cluster.link_count());
  for (topo::LinkId l = 0; l < cluster.link_count(); ++l) {
    capacities.push_back(cluster.link(l).bandwidth);
  }
  sim::Simulator sim;
  sim::FlowNetwork network(sim, std::move(capacities));
  sim::Executor executor(sim, network);
  Outcome out;
  out.latency.assign(plan.tasks().size(), Time{});
  // Each GPU has one compute stream. A flow from a GPU to itself is a zero-time delay: it
  // takes no link and does not block the GPU's compute stream.
  for (std::size_t i = 0; i < plan.tasks().size(); ++i) {
    const PlanTask& t = plan.tasks()[i];
    HOPSIM_ASSERT(t.src >= 0 && t.src < cluster.gpu_count() && t.dst >= 0 &&
                      t.dst < cluster.gpu_count(),
                  "task {} between GPUs {} and {} of {}", i, t.src, t.dst, cluster.gpu_count());
    sim::TaskId id = 0;
    if (t.kind == PlanTaskKind::Compute) {
      id = executor.add_compute(static_cast<sim::StreamId>(t.src), t.duration);
    } else if (t.kind == PlanTaskKind::Delay) {
      id = executor.add_delay(t.duration);
    } else if (t.src == t.dst) {
      id = executor.add_delay(Time{});
    } else {
      const topo::Route route = cluster.route(t.src, t.dst);
      out.latency[i] = t.latency ? *t.latency : cluster.latency(route.span());
      id = executor.add_transfer(route.span(), t.bytes, out.latency[i]);
    }
    HOPSIM_ASSERT(id == i, "executor task {} for plan task {}", id, i);
    if (t.not_before > Time{}) {
      executor.set_not_before(id, t.not_before);
    }
  }
  for (const auto& [before, after] : plan.dependencies()) {
    executor.add_dependency(before, after);
  }
  executor.launch();
  sim.run();
  out.times.reserve(plan.tasks().size());
  for (sim::TaskId t = 0; t < executor.size(); ++t) {
    out.times.push_back(executor.times(t));
    if (out.times.back().end != Time::max()) {
      out.makespan = std::max(out.makespan, out.times.back().end);
    }
  }
  out.stuck = executor.stuck();
  out.events = sim.events_run();
  out.flows = network.flows_started();
  out.solves = network.solves();
  out.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace hopsim::work
