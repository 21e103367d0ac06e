// Explicit flows: checks (ranks, cycles, time range) and the plan.
#include "workloads/jobs/flows_job.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "workloads/costs/bounds.hpp"

namespace hopsim::work {
namespace {

// "a" -> "b" -> ... -> "a", with at most a few members named.
std::string cycle_text(const std::vector<ExplicitFlow>& flows, const std::vector<std::size_t>& cycle) {
  constexpr std::size_t kShown = 4;
  std::string text;
  for (std::size_t i = 0; i < cycle.size() && i < kShown; ++i) {
    text += fmt::format("\"{:.40}\" -> ", flows[cycle[i]].id);
  }
  if (cycle.size() > kShown) {
    text += fmt::format("... ({} flows in all) -> ", cycle.size());
  }
  return text + fmt::format("\"{:.40}\"", flows[cycle.front()].id);
}

// Iterative depth-first search; the first cycle found, as flow indices, or empty.
std::vector<std::size_t> find_cycle(const std::vector<ExplicitFlow>& flows) {
  enum class Mark : std::uint8_t { New, Open, Done };
  std::vector<Mark> mark(flows.size(), Mark::New);
  for (std::size_t root = 0; root < flows.size(); ++root) {
    if (mark[root] != Mark::New) {
      continue;
    }
    std::vector<std::pair<std::size_t, std::size_t>> stack{{root, 0}};  // (flow, next child)
    mark[root] = Mark::Open;
    while (!stack.empty()) {
      auto& [node, child] = stack.back();
      if (child == flows[node].after.size()) {
        mark[node] = Mark::Done;
        stack.pop_back();
        continue;
      }
      const std::size_t next = flows[node].after[child++];
      if (mark[next] == Mark::Open) {
        std::vector<std::size_t> cycle;
        auto it = std::find_if(stack.begin(), stack.end(),
                               [next](const auto& e) { return e.first == next; });
        for (; it != stack.end(); ++it) {
          cycle.push_back(it->first);
        }
        return cycle;
      }
      if (mark[next] == Mark::New) {
        mark[next] = Mark::Open;
        stack.emplace_back(next, 0);
      }
    }
  }
  return {};
}

// Simulated time and bytes that fit (bounds.hpp).
void check_load(const std::vector<ExplicitFlow>& flows, const topo::Spec& spec, Problems& out) {
  PlanLoad load;
  load.flows = static_cast<double>(flows.size());
  load.flow_latency = longest_route_latency(spec);
  for (const ExplicitFlow& f : flows) {
    load.bytes += static_cast<double>(f.bytes.n);
    load.fixed = std::max(load.fixed, f.start);
  }
  if (const auto problem = load_problem(load, spec, "these flows")) {
    out.push_back({"/workload/flows", *problem});
  }
}

}  // namespace

void FlowsJob::check(const JobEnv& env, Problems& out) const {
  if (flows.empty()) {
    out.push_back({"/workload/flows", "expected at least one flow"});
    return;
  }
  const int gpus = env.cluster.gpu_count();
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const ExplicitFlow& f = flows[i];
    for (const auto& [key, rank] : {std::pair{"src", f.src}, std::pair{"dst", f.dst}}) {
      if (rank < 0 || rank >= gpus) {
        out.push_back({fmt::format("/workload/flows/{}/{}", i, key),
                       fmt::format("GPU {} is not in the cluster (GPUs 0 to {})", rank, gpus - 1)});
        return;
      }
    }
    if (f.src == f.dst) {
      out.push_back({fmt::format("/workload/flows/{}/dst", i),
                     fmt::format("a flow from GPU {} to itself moves nothing over any link", f.src)});
      return;
    }
  }
  if (const std::vector<std::size_t> cycle = find_cycle(flows); !cycle.empty()) {
    out.push_back({fmt::format("/workload/flows/{}/after", cycle.back()),
                   fmt::format("dependency cycle: {} (each waits for the next)",
                               cycle_text(flows, cycle))});
    return;
  }
  check_load(flows, env.cluster, out);
}

double FlowsJob::estimated_plan_bytes(const JobEnv& /*env*/) const {
  double after = 0;
  for (const ExplicitFlow& f : flows) {
    after += static_cast<double>(f.after.size());
  }
  return static_cast<double>(flows.size()) * kBytesPerPlanFlow + after * kBytesPerPlanTask;
}

std::vector<Case> FlowsJob::cases(const BuildEnv& /*env*/) const {
  std::vector<Case> out;
  out.push_back({"", build_flows_plan(flows)});
  return out;
}

Plan build_flows_plan(const std::vector<ExplicitFlow>& flows) {
  Plan plan;
  plan.phase(PhaseKind::Flows, PhasePass::Fwd);
  plan.reserve(flows.size());
  for (const ExplicitFlow& f : flows) {
    const PlanTaskId t = plan.add_flow(topo::GpuId{f.src}, topo::GpuId{f.dst}, f.bytes);
    plan.set_not_before(t, f.start);
    plan.set_label(t, f.id);
  }
  for (std::size_t i = 0; i < flows.size(); ++i) {
    for (std::size_t before : flows[i].after) {
      plan.add_dependency(static_cast<PlanTaskId>(before), static_cast<PlanTaskId>(i));
    }
  }
  return plan;
}

}  // namespace hopsim::work
