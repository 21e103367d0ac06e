// Plan -> executor tasks (routes from the plan or the topology), run, collect times.
#include "workloads/plan/runner.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>

#include "sim/assert.hpp"

namespace hopsim::work {

RunObserver::~RunObserver() = default;

namespace {

// Routes every flow once (the topology's route, or through the NICs alone where the plan says),
// and the outcome keeps them for summaries, reports and traces.
void route_flows(const topo::Cluster& cluster, const Plan& plan, Outcome& out) {
  const auto& tasks = plan.tasks();
  out.route_begin.reserve(tasks.size() + 1);
  for (const PlanTask& t : tasks) {
    out.route_begin.push_back(static_cast<std::uint32_t>(out.route_links.size()));
    if (t.kind != PlanTaskKind::Flow || t.src == t.dst) {
      continue;
    }
    const topo::Route route = route_of(cluster, t);
    out.route_links.insert(out.route_links.end(), route.span().begin(), route.span().end());
  }
  out.route_begin.push_back(static_cast<std::uint32_t>(out.route_links.size()));
}

// The flow solver's name for each link of `route`: a resource id, the link's index.
std::span<const sim::ResourceId> resources_of(
    std::span<const topo::LinkId> route, std::array<sim::ResourceId, topo::kMaxRouteLinks>& to) {
  HOPSIM_ASSERT(route.size() <= to.size(), "a route of {} links", route.size());
  std::transform(route.begin(), route.end(), to.begin(), [](topo::LinkId l) { return l.value(); });
  return {to.data(), route.size()};
}

void add_tasks(const topo::Cluster& cluster, const ComputeSpeeds* speeds, const Plan& plan,
               sim::Executor& executor, Outcome& out) {
  const auto streams = static_cast<sim::StreamId>(plan.streams().size());
  for (std::size_t i = 0; i < plan.tasks().size(); ++i) {
    const PlanTask& t = plan.tasks()[i];
    HOPSIM_ASSERT(cluster.contains(t.src) && cluster.contains(t.dst),
                  "task {} between GPUs {} and {} of {}", i, t.src, t.dst, cluster.gpu_count());
    const auto task = static_cast<PlanTaskId>(i);
    sim::TaskId id = 0;
    if (t.kind == PlanTaskKind::Compute || t.kind == PlanTaskKind::Hold) {
      id = executor.add_compute(static_cast<sim::StreamId>(t.src.value()) * streams + t.stream,
                                time_on_gpu(speeds, t, i));
    } else if (t.kind == PlanTaskKind::Delay || out.route(task).empty()) {
      id = executor.add_delay(t.kind == PlanTaskKind::Delay ? t.duration : Time{});
    } else {
      out.latency[i] = t.latency ? *t.latency : cluster.latency(out.route(task));
      const Bytes wire{t.efficiency == 1.0 ? t.bytes.n
                                           : static_cast<std::int64_t>(std::ceil(
                                                 static_cast<double>(t.bytes.n) / t.efficiency))};
      std::array<sim::ResourceId, topo::kMaxRouteLinks> resources{};
      id = executor.add_transfer(resources_of(out.route(task), resources), wire, out.latency[i]);
    }
    HOPSIM_ASSERT(id == i, "executor task {} for plan task {}", id, i);
    if (t.not_before > Time{}) {
      executor.set_not_before(id, t.not_before);
    }
  }
}

}  // namespace

Time time_on_gpu(const ComputeSpeeds* speeds, const PlanTask& t, std::size_t i) {
  if (speeds == nullptr || t.kind != PlanTaskKind::Compute) {
    return t.duration;
  }
  const double speed = speeds->kernel_speed(t.src, t.kernel, i);
  return speed == 1.0 ? t.duration : at_speed(t.duration, speed);
}

Outcome simulate(const topo::Cluster& cluster, const Plan& plan, const SimulateOptions& options) {
  RunObserver* const observer = options.observer;
  const auto wall_start = std::chrono::steady_clock::now();
  std::vector<Bandwidth> capacities;
  capacities.reserve(cluster.link_count());
  for (const topo::Link& link : cluster.links()) {
    capacities.push_back(link.bandwidth);
  }
  sim::Simulator sim;
  sim::FlowNetwork network(sim, std::move(capacities));
  network.set_tolerance(options.tolerance);
  sim::Executor executor(sim, network);
  Outcome out;
  out.latency.assign(plan.tasks().size(), Time{});
  route_flows(cluster, plan, out);
  add_tasks(cluster, options.speeds, plan, executor, out);
  for (const auto& [before, after] : plan.dependencies()) {
    executor.add_dependency(before, after);
  }
  if (observer != nullptr) {
    executor.set_on_start([&](sim::TaskId t) { observer->on_task_start(t, sim.now()); });
    executor.set_on_end([&](sim::TaskId t) { observer->on_task_end(t, sim.now()); });
    network.set_on_solve([&] { observer->on_rates(sim.now(), network); });
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
  out.classes_solved = network.classes_solved();
  out.flows_snapped = network.flows_snapped();
  out.solver = network.solver_stats();
  out.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace hopsim::work
