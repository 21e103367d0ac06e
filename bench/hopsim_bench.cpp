// Speed benchmarks of the engine and flow solver: one case per process (make bench).
#include <algorithm>
#include <array>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <sys/resource.h>

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
  std::uint64_t classes_solved = 0;
  std::uint64_t early = 0;  // flows finished early by the tolerance
  double tolerance = 0;
  sim::FairShareStats stats;
  double wall_s = 0;
  Time makespan;
  std::vector<Time> start, end;  // per flow
};

double peak_rss_gb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0 / 1e9;  // ru_maxrss is in KiB
}

std::size_t as_index(int i) {
  return static_cast<std::size_t>(i);
}

Result counters(std::string name, const sim::Simulator& sim, const sim::FlowNetwork& net) {
  Result r;
  r.name = std::move(name);
  r.events = sim.events_run();
  r.flows = net.flows_started();
  r.solves = net.solves();
  r.classes_solved = net.classes_solved();
  r.early = net.flows_snapped();
  r.tolerance = net.tolerance();
  r.stats = net.solver_stats();
  return r;
}

// Runs a plan through work::simulate, as `hopsim run` does, in the given mode.
Result run_plan(std::string name, const topo::Cluster& cluster, const work::Plan& plan,
                double tolerance) {
  const work::Outcome out =
      work::simulate(cluster, plan, work::SimulateOptions{.tolerance = tolerance});
  Result r;
  r.name = std::move(name);
  r.events = out.events;
  r.flows = out.flows;
  r.solves = out.solves;
  r.classes_solved = out.classes_solved;
  r.early = out.flows_snapped;
  r.tolerance = tolerance;
  r.stats = out.solver;
  r.makespan = out.makespan;
  for (std::size_t t = 0; t < plan.tasks().size(); ++t) {
    if (plan.tasks()[t].kind == work::PlanTaskKind::Flow) {
      r.start.push_back(out.times[t].start);
      r.end.push_back(out.times[t].end);
    }
  }
  return r;
}

topo::Cluster cluster_of(int nodes) {
  topo::Spec spec;  // H100-class defaults: 450 GB/s NVLink, 50 GB/s NIC, rail-optimized, PXN
  spec.name = fmt::format("bench-{}x8", nodes);
  spec.nodes = nodes;
  return topo::Cluster(spec);
}

// (a) Flows on disjoint links: the engine and the per-flow bookkeeping, no sharing.
Result disjoint(std::uint32_t flows, double tolerance) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim, std::vector<Bandwidth>(flows, Bandwidth::gigabytes_per_s(50)));
  net.set_tolerance(tolerance);
  std::vector<Time> end(flows);
  net.set_on_finish([&](sim::FlowId f) { end[f] = sim.now(); });  // for --compare
  for (std::uint32_t f = 0; f < flows; ++f) {
    const sim::ResourceId route[] = {f};
    // Sizes vary so that completions spread over many instants.
    net.start(route, Bytes{1'000'000 + static_cast<std::int64_t>(f % 1000) * 1000}, Time::us(2));
  }
  sim.run();
  Result r = counters("disjoint flows", sim, net);
  r.makespan = sim.now();
  r.start.assign(flows, Time{});
  r.end = std::move(end);
  return r;
}

// Every GPU sends bytes(src, dst) to every other GPU at once.
template <typename BytesOf>
work::Plan exchange(int gpus, BytesOf bytes_of) {
  work::Plan plan;
  plan.reserve(as_index(gpus) * as_index(gpus - 1));
  for (int s = 0; s < gpus; ++s) {
    for (int d = 0; d < gpus; ++d) {
      if (s != d) {
        plan.add_flow(topo::GpuId{s}, topo::GpuId{d}, bytes_of(s, d));
      }
    }
  }
  return plan;
}

// (f), (g), (h) Uneven all-to-all-v: each pair its own size, U(0.5, 1.5) x 16 MiB, so that
// every flow finishes at its own instant. Drawn by modulo: the same on every platform.
work::Plan uneven_all_to_all(int gpus) {
  std::mt19937_64 rng(20240601);
  return exchange(gpus, [&rng](int, int) {
    return Bytes{(std::int64_t{1} << 23) + static_cast<std::int64_t>(rng() % (1U << 24))};
  });
}

// splitmix64: a small portable generator, for the MoE case's two million draws.
std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31U);
}

// (i) MoE-like dispatch: 4,096 tokens per GPU, each to its top-8 of 256 experts (4 per GPU),
// expert popularity zipf(1.0) over a seeded order, 7,168 x 2 B per token copy. A GPU's own
// experts take no flow.
work::Plan moe_dispatch(int gpus) {
  constexpr int kExperts = 256, kTopK = 8, kTokens = 4096;
  constexpr std::int64_t kTokenBytes = 7168 * 2;
  std::uint64_t state = 7;
  std::vector<int> rank(kExperts);
  for (int e = 0; e < kExperts; ++e) {
    rank[as_index(e)] = e;
  }
  for (int e = kExperts - 1; e > 0; --e) {  // Fisher-Yates by modulo: portable
    std::swap(rank[as_index(e)], rank[splitmix(state) % static_cast<std::uint64_t>(e + 1)]);
  }
  std::vector<double> cumulative;
  double sum = 0;
  for (int e = 0; e < kExperts; ++e) {
    sum += 1.0 / (rank[as_index(e)] + 1);
    cumulative.push_back(sum);
  }
  std::vector<std::int64_t> copies(as_index(gpus) * as_index(gpus), 0);
  for (int s = 0; s < gpus; ++s) {
    for (int t = 0; t < kTokens; ++t) {
      std::array<int, kTopK> chosen{};
      std::size_t count = 0;
      while (count < chosen.size()) {
        const double u = static_cast<double>(splitmix(state) >> 11U) * 0x1p-53 * sum;
        const auto e =
            std::min(kExperts - 1,
                     static_cast<int>(std::upper_bound(cumulative.begin(), cumulative.end(), u) -
                                      cumulative.begin()));
        const auto end = chosen.begin() + static_cast<std::ptrdiff_t>(count);
        if (std::find(chosen.begin(), end, e) == end) {
          chosen[count++] = e;
          ++copies[as_index(s) * as_index(gpus) + as_index(e * gpus / kExperts)];
        }
      }
    }
  }
  work::Plan plan;
  for (int s = 0; s < gpus; ++s) {
    for (int d = 0; d < gpus; ++d) {
      const std::int64_t n = copies[as_index(s) * as_index(gpus) + as_index(d)];
      if (s != d && n > 0) {
        plan.add_flow(topo::GpuId{s}, topo::GpuId{d}, Bytes{n * kTokenBytes});
      }
    }
  }
  return plan;
}

// (m) Mixed traffic among 64 GPUs: the uneven all-to-all-v of case f beside 8 ring
// all-reduces (one per GPU index within a node, across the 8 nodes, as data-parallel rings
// run), each 2 x 7 steps of 8 chained flows of 4 MiB; ring r starts r x 50 us late, so rings
// and the all-to-all overlap at staggered times and every ring step waits on its previous one.
work::Plan mixed_traffic(const topo::Cluster& cluster) {
  const int gpus = cluster.gpu_count();
  work::Plan plan = uneven_all_to_all(gpus);
  constexpr int kNodes = 8, kSteps = 2 * (kNodes - 1);
  for (int r = 0; r < gpus / kNodes; ++r) {
    std::vector<work::PlanTaskId> previous;
    for (int step = 0; step < kSteps; ++step) {
      std::vector<work::PlanTaskId> current;
      for (int n = 0; n < kNodes; ++n) {
        const topo::GpuId src{n * (gpus / kNodes) + r};
        const topo::GpuId dst{((n + 1) % kNodes) * (gpus / kNodes) + r};
        const work::PlanTaskId f = plan.add_flow(src, dst, Bytes{std::int64_t{1} << 22});
        if (step == 0) {
          plan.set_not_before(f, Time::us(50 * r));
        } else {
          plan.add_dependency(previous[as_index(n)], f);
        }
        current.push_back(f);
      }
      previous = std::move(current);
    }
  }
  return plan;
}

Result run_case(const std::string& which, double tolerance) {
  if (which == "a") {
    return disjoint(1'000'000, tolerance);
  }
  if (which == "b" || which == "c") {
    const topo::Cluster cluster = cluster_of(which == "b" ? 8 : 128);
    const int gpus = cluster.gpu_count();
    return run_plan(fmt::format("all-pairs {} GPUs", gpus), cluster,
                    exchange(gpus, [](int, int) { return Bytes{1 << 20}; }), tolerance);
  }
  if (which == "d" || which == "e") {
    topo::Spec spec;
    spec.name = "bench-128x8";
    spec.nodes = 128;
    const topo::Cluster cluster(spec);
    const work::NcclModel nccl;
    const work::Mesh mesh(work::ParallelSpec{});
    const work::JobEnv env{spec, nccl, mesh};
    work::CollectiveJob job;
    job.op = work::CollectiveOp::AllToAll;
    job.algorithm = work::exchange_algorithm(which == "d" ? work::EpAlgorithm::Flat
                                                          : work::EpAlgorithm::TwoTier);
    for (int r = 0; r < cluster.gpu_count(); ++r) {
      job.ranks.push_back(r);
    }
    const work::Plan plan = work::build_collective_plan(work::BuildEnv{env, cluster}, job,
                                                        Bytes{std::int64_t{1} << 30});
    return run_plan(
        fmt::format("all-to-all {} {}", work::algorithm_name(job.algorithm), cluster.gpu_count()),
        cluster, plan, tolerance);
  }
  if (which == "i") {
    const topo::Cluster cluster = cluster_of(8);
    return run_plan("MoE zipf dispatch 64", cluster, moe_dispatch(64), tolerance);
  }
  if (which == "m") {
    const topo::Cluster cluster = cluster_of(8);
    return run_plan("mixed rings+a2a-v 64", cluster, mixed_traffic(cluster), tolerance);
  }
  const int nodes = which == "f"   ? 8
                    : which == "j" ? 16
                    : which == "g" ? 32
                    : which == "k" ? 64
                                   : 128;
  const topo::Cluster cluster = cluster_of(nodes);
  return run_plan(fmt::format("uneven a2a-v {}", cluster.gpu_count()), cluster,
                  uneven_all_to_all(cluster.gpu_count()), tolerance);
}

void print(const std::string& which, const Result& r) {
  fmt::print(
      "{} {:<22} {:>9} flows {:>9} events {:>8} solves {:>11} classes-solved  wall "
      "{:8.3f} s {:>10.0f} events/s  makespan {:.9f} s  peak {:.3f} GB  {}\n",
      which, r.name, r.flows, r.events, r.solves, r.classes_solved, r.wall_s,
      static_cast<double>(r.events) / r.wall_s, r.makespan.seconds(), peak_rss_gb(),
      r.tolerance > 0 ? fmt::format("tolerance {:g} ({} flows snapped)", r.tolerance, r.early)
                      : std::string("exact"));
}

// Errors of the approximate run against the exact one: makespan; each flow's finish relative
// to its exact duration (start to end): the worst, the mean with its sign (a bias: negative
// when flows end early), and the share of flows that end early.
void compare(const Result& exact, const Result& approx) {
  double worst = 0;
  double mean = 0;
  std::size_t early = 0;
  const auto n = static_cast<double>(exact.end.size());
  for (std::size_t i = 0; i < exact.end.size(); ++i) {
    const double d = (approx.end[i] - exact.end[i]).seconds() /
                     (exact.end[i] - exact.start[i]).seconds();
    worst = std::max(worst, std::fabs(d));
    mean += d / n;
    early += d < 0 ? 1 : 0;
  }
  const double m = (approx.makespan - exact.makespan).seconds() / exact.makespan.seconds();
  fmt::print(
      "  tolerance {:g}: makespan error {:+.3e} (relative), flow finish errors (of the flow's "
      "duration): worst {:.3e}, mean {:+.2e}, {:.0f}% early; solves {} vs {}\n",
      approx.tolerance, m, worst, mean, 100 * static_cast<double>(early) / n, approx.solves,
      exact.solves);
}

void write_ends(const std::string& path, const Result& r) {
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) {
    throw std::runtime_error(fmt::format("--ends {}: {}", path, std::strerror(errno)));
  }
  for (const Time t : r.end) {
    fmt::print(out, "{}\n", t.count_ps());
  }
  std::fclose(out);
}

Result timed(const std::string& which, double tolerance) {
  const auto start = std::chrono::steady_clock::now();
  Result r = run_case(which, tolerance);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"hopsim benchmarks; run one case per process so that peak memory is its own"};
    std::string which = "a";
    std::vector<double> tolerances{0};
    bool compare_exact = false;
    bool show_stats = false;
    app.add_option("case", which,
                   "a: 1,000,000 flows on disjoint links; b: all-pairs among 64 GPUs; c: all-pairs "
                   "among 1,024 GPUs; d: flat all-to-all among 1,024 GPUs; e: two-tier "
                   "all-to-all among 1,024 GPUs; f, g, h: uneven all-to-all-v among 64, 256, "
                   "1,024 GPUs; i: MoE-like dispatch among 64 GPUs, zipf expert popularity; j, k: uneven "
                   "all-to-all-v among 128, 512 GPUs; m: mixed traffic among 64 GPUs (chained "
                   "rings with staggered starts beside an uneven all-to-all-v)")
        ->check(CLI::IsMember({"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "m"}));
    app.add_option("--tolerance", tolerances,
                   "approximate mode: relative tolerance (0 = exact); several run one after "
                   "another (and --compare compares each with one exact run)")
        ->check(CLI::Range(0.0, 0.5));
    app.add_flag("--compare", compare_exact,
                 "also run exact and print the approximate run's errors against it");
    app.add_flag("--stats", show_stats, "print the solver's structural counters");
    std::string ends_path;
    app.add_option("--ends", ends_path,
                   "write each flow's finish time (ps, one a line, in plan order) of the first "
                   "run to this file: diff two builds' files to check they agree bit for bit");
    CLI11_PARSE(app, argc, argv);
    std::vector<Result> runs;
    for (const double tolerance : tolerances) {
      Result r = timed(which, tolerance);
      print(which, r);
      if (!ends_path.empty()) {
        write_ends(ends_path, r);
        ends_path.clear();
      }
      if (show_stats) {
        fmt::print(
            "  solver: {} re-filled groups changed rate; {} promotions, {} demotions, {} "
            "redos, {} merges, {} splits\n",
            r.stats.groups_changed, r.stats.promotions, r.stats.demotions, r.stats.redos,
            r.stats.merges, r.stats.splits);
      }
      if (compare_exact && tolerance > 0) {
        runs.push_back(std::move(r));
      }
    }
    if (!runs.empty()) {
      const Result exact = timed(which, 0);
      print(which, exact);
      for (const Result& r : runs) {
        compare(exact, r);
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "hopsim_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
