// Speed benchmarks of the engine and flow solver: events/s, flows/s, wall time, peak memory.
#include <sys/resource.h>

#include <chrono>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/flow_network.hpp"
#include "topology/cluster.hpp"
#include "workloads/jobs/collective_job.hpp"
#include "workloads/plan/runner.hpp"

namespace {

using namespace hopsim;

struct Result {
  std::string name;
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  std::uint64_t solves = 0;
  double wall_s = 0;
  double sim_s = 0;
};

double peak_rss_gb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0 / 1e9;  // ru_maxrss is in KiB
}

// (a) Flows on disjoint links: the engine and the per-flow bookkeeping, no sharing.
Result disjoint(std::uint32_t flows) {
  const auto start = std::chrono::steady_clock::now();
  sim::Simulator sim;
  sim::FlowNetwork net(sim, std::vector<Bandwidth>(flows, Bandwidth::gigabytes_per_s(50)));
  for (std::uint32_t f = 0; f < flows; ++f) {
    const sim::ResourceId route[] = {f};
    // Sizes vary so that completions spread over many instants.
    net.start(route, Bytes{1'000'000 + static_cast<std::int64_t>(f % 1000) * 1000}, Time::us(2));
  }
  sim.run();
  Result r{"disjoint", sim.events_run(), net.flows_started(), net.solves()};
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.sim_s = sim.now().seconds();
  return r;
}

// (b), (c) Every GPU sends `bytes` to every other GPU at once on a rail-optimized fabric.
Result all_pairs(int nodes, Bytes bytes) {
  const auto start = std::chrono::steady_clock::now();
  topo::Spec spec;  // H100-class defaults: 450 GB/s NVLink, 50 GB/s NIC, PXN
  spec.name = fmt::format("bench-{}x8", nodes);
  spec.nodes = nodes;
  const topo::Cluster cluster(spec);
  const int gpus = cluster.gpu_count();
  work::Plan plan;
  plan.reserve(static_cast<std::size_t>(gpus) * static_cast<std::size_t>(gpus - 1));
  for (int s = 0; s < gpus; ++s) {
    for (int d = 0; d < gpus; ++d) {
      if (s != d) {
        plan.add_flow(s, d, bytes);
      }
    }
  }
  const work::Outcome out = work::simulate(cluster, plan);
  Result r{fmt::format("all-pairs {} GPUs", gpus), out.events, out.flows, out.solves};
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.sim_s = out.makespan.seconds();
  return r;
}

// (d), (e) An nccl-tests all-to-all of `per_rank` bytes among 1,024 GPUs, flat or two-tier.
Result all_to_all(int nodes, Bytes per_rank, work::CollectiveAlgorithm algorithm) {
  const auto start = std::chrono::steady_clock::now();
  topo::Spec spec;
  spec.nodes = nodes;
  const topo::Cluster cluster(spec);
  work::CollectiveJob job;
  job.op = work::CollectiveOp::AllToAll;
  job.algorithm = algorithm;
  for (int r = 0; r < cluster.gpu_count(); ++r) {
    job.ranks.push_back(r);
  }
  const work::NcclModel nccl;
  const work::Mesh mesh(work::ParallelSpec{});
  const work::JobEnv env{spec, nccl, mesh};
  const work::Outcome out = work::simulate(
      cluster, work::build_collective_plan(work::BuildEnv{env, cluster}, job, per_rank));
  Result r{fmt::format("all-to-all {} {}", work::algorithm_name(algorithm), cluster.gpu_count()),
           out.events, out.flows, out.solves};
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.sim_s = out.makespan.seconds();
  return r;
}

void print(const Result& r) {
  fmt::print("{:<22} {:>9} flows {:>9} events {:>6} solves  wall {:7.3f} s  {:>10.0f} events/s "
             "{:>10.0f} flows/s  simulated {:.6f} s  peak {:.2f} GB\n",
             r.name, r.flows, r.events, r.solves, r.wall_s,
             static_cast<double>(r.events) / r.wall_s, static_cast<double>(r.flows) / r.wall_s,
             r.sim_s, peak_rss_gb());
}

void run_case(const std::string& which) {
  if (which == "a") {
    print(disjoint(1'000'000));
  } else if (which == "b") {
    print(all_pairs(8, Bytes{1 << 20}));
  } else if (which == "c") {
    print(all_pairs(128, Bytes{1 << 20}));
  } else {
    const auto algorithm =
        which == "d" ? work::CollectiveAlgorithm::Flat : work::CollectiveAlgorithm::TwoTier;
    print(all_to_all(128, Bytes{std::int64_t{1} << 30}, algorithm));
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"hopsim benchmarks; run one case per process so that peak memory is its own"};
    std::string which = "a";
    app.add_option("case", which,
                   "a: 1,000,000 flows on disjoint links; b: all-pairs among 64 GPUs; c: all-pairs "
                   "among 1,024 GPUs; d: flat all-to-all among 1,024 GPUs; e: two-tier "
                   "all-to-all among 1,024 GPUs")
        ->check(CLI::IsMember({"a", "b", "c", "d", "e"}));
    CLI11_PARSE(app, argc, argv);
    run_case(which);
  } catch (const std::exception& e) {
    fmt::print(stderr, "hopsim_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
