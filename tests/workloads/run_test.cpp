// run(): an experiment as data in, results out; checks, cases, threads, observers.
#include "workloads/experiment/run.hpp"

#include <thread>

#include "doctest_time.hpp"
#include "tests/approx.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

Experiment two_node_flows() {
  Experiment e;
  e.name = "flows";
  e.cluster.nodes = 2;
  e.cluster.nvlink = {Bandwidth::gigabytes_per_s(400), Time::ns(700)};
  e.cluster.nic = {Bandwidth::gigabytes_per_s(50), Time::ns(500)};
  e.cluster.software_overhead = Time::ns(2'000);
  FlowsJob job;
  job.flows = {{"a", 0, 1, Bytes{400'000'000}, Time{}, {}},
               {"b", 3, 11, Bytes{100'000'000}, Time::us(5), {}},
               {"c", 1, 2, Bytes{400'000'000}, Time{}, {0}}};
  e.job = job;
  return e;
}

// A MoE all-to-all over 32 GPUs and an all-reduce over sizes: uneven, multi-case work.
Experiment moe_all_to_all(std::uint64_t seed) {
  Experiment e;
  e.name = "moe";
  e.cluster.nodes = 4;
  CollectiveJob job;
  job.op = CollectiveOp::AllToAll;
  job.algorithm = exchange_algorithm(EpAlgorithm::TwoTier);
  job.moe = MoeRouting{256, 64, 8, 2, seed};
  job.token_bytes = Bytes{7168};
  job.sizes = {Bytes{256 * 7168}};
  e.job = job;
  return e;
}

Experiment all_reduce_sizes() {
  Experiment e;
  e.name = "sizes";
  e.cluster.nodes = 2;
  CollectiveJob job;
  job.op = CollectiveOp::AllReduce;
  job.sizes = {Bytes{1 << 20}, Bytes{1 << 24}, Bytes{1 << 28}};
  e.job = job;
  return e;
}

// What must be equal between two runs of one experiment (everything but wall time).
void check_same(const RunResult& a, const RunResult& b) {
  REQUIRE(a.cases.size() == b.cases.size());
  for (std::size_t c = 0; c < a.cases.size(); ++c) {
    const Outcome& x = a.cases[c].outcome;
    const Outcome& y = b.cases[c].outcome;
    CHECK(x.makespan == y.makespan);
    CHECK(x.events == y.events);
    REQUIRE(x.times.size() == y.times.size());
    for (std::size_t i = 0; i < x.times.size(); ++i) {
      CHECK(x.times[i].end == y.times[i].end);
    }
    CHECK(a.cases[c].summary.ib_bytes == b.cases[c].summary.ib_bytes);
  }
}

}  // namespace

TEST_CASE("run() simulates an experiment given as data") {
  const RunResult r = run(two_node_flows());
  REQUIRE(r.ok());
  REQUIRE(r.cases.size() == 1);
  const CaseResult& c = r.cases.front();
  const Time hop = Time::ns(3'400) + transfer_time(Bytes{400'000'000}, Bandwidth{400e9});
  CHECK(c.outcome.times[0].end == hop);
  CHECK(c.outcome.times[2].end == 2 * hop);  // "c" waits for "a"
  CHECK(c.outcome.times[1].end ==
        Time::us(5) + Time::ns(3'000) + transfer_time(Bytes{100'000'000}, Bandwidth{50e9}));
  CHECK(c.plan.label(c.plan.tasks()[1]) == "b");
  // The outcome keeps the routes it simulated: b crosses its NIC up, the leaf, NIC down.
  CHECK(c.outcome.route(1).size() == 2);
  CHECK(r.cluster->link(c.outcome.route(1)[0]).name == "n0.g3.nic.up");
  CHECK(c.summary.ib_bytes.n == 100'000'000);
}

TEST_CASE("run() returns problems instead of running, with pointers into the experiment") {
  Experiment e = two_node_flows();
  std::get<FlowsJob>(e.job).flows[1].dst = 99;
  RunResult r = run(e);
  REQUIRE(!r.ok());
  CHECK(r.problems.front().path == "/workload/flows/1/dst");
  CHECK(r.cases.empty());
  e = two_node_flows();
  e.cluster.fabric = topo::FabricKind::FatTree;
  e.cluster.nodes_per_leaf = 3;
  r = run(e);
  REQUIRE(!r.ok());
  CHECK(r.problems.front().path == "/cluster/fabric/nodes_per_leaf");
  e = two_node_flows();
  e.job = AttentionLayerJob{};
  r = run(e);
  REQUIRE(!r.ok());
  CHECK(r.problems.front().path == "/model");  // no model: checked before "not simulated"
}

TEST_CASE("a multi-size collective gives one case per size, each with its own summary") {
  const RunResult r = run(all_reduce_sizes());
  REQUIRE(r.ok());
  REQUIRE(r.cases.size() == 3);
  CHECK(r.cases[0].name == "1048576 B");
  CHECK(r.cases[0].outcome.makespan < r.cases[1].outcome.makespan);
  CHECK(r.cases[1].outcome.makespan < r.cases[2].outcome.makespan);
  for (const CaseResult& c : r.cases) {
    CHECK(c.summary.step == c.outcome.makespan);
    CHECK(c.summary.nvlink_bytes.n > 0);
  }
}

TEST_CASE("run() from two threads at once gives the sequential results") {
  const Experiment a = moe_all_to_all(1);
  const Experiment b = moe_all_to_all(2);
  const Experiment c = all_reduce_sizes();
  const RunResult ra = run(a);
  const RunResult rb = run(b);
  const RunResult rc = run(c);
  RunResult pa;
  RunResult pb;
  RunResult pc;
  std::thread t1([&] { pa = run(a); });
  std::thread t2([&] {
    pb = run(b);
    pc = run(c);
  });
  t1.join();
  t2.join();
  check_same(ra, pa);
  check_same(rb, pb);
  check_same(rc, pc);
  CHECK(ra.cases[0].outcome.makespan != rb.cases[0].outcome.makespan);  // seeds differ
}

TEST_CASE("probes on a pool of threads give the results of one thread, in declared order") {
  // The all-reduce sizes' plans as probes: run_probes simulates them concurrently on one
  // shared cluster (ThreadSanitizer runs this test in CI).
  const Experiment e = all_reduce_sizes();
  const RunResult r = run(e);
  REQUIRE(r.cases.size() >= 3);
  const auto probes = [&] {
    std::vector<Probe> out;
    for (const CaseResult& c : r.cases) {
      out.push_back({c.name, c.plan});
    }
    return out;
  };
  const std::vector<ProbeResult> one = run_probes(*r.cluster, probes(), 0, 1);
  const std::vector<ProbeResult> many = run_probes(*r.cluster, probes(), 0, 4);
  REQUIRE(one.size() == r.cases.size());
  REQUIRE(many.size() == r.cases.size());
  for (std::size_t i = 0; i < r.cases.size(); ++i) {
    CHECK(one[i].name == r.cases[i].name);
    CHECK(many[i].name == r.cases[i].name);
    CHECK(one[i].outcome.makespan == r.cases[i].outcome.makespan);
    CHECK(many[i].outcome.makespan == r.cases[i].outcome.makespan);
    CHECK(many[i].outcome.events == one[i].outcome.events);
    CHECK(many[i].summary.step == one[i].summary.step);
  }
  const Measured measured(many);
  CHECK(measured.size() == r.cases.size());
  CHECK(&measured.at(r.cases[1].name) == &many[1]);
  CHECK(measured.find("no such probe") == nullptr);
}

TEST_CASE("watched links record their load whenever it changes") {
  RunOptions options;
  options.watch_links = 2;
  const RunResult r = run(two_node_flows(), options);
  const CaseResult& c = r.cases.front();
  REQUIRE(c.link_loads.size() == 2);
  // The busiest for their bandwidth carry "b" (100 MB over 50 GB/s InfiniBand: 2 ms at full
  // rate), not "a" and "c" (400 MB each over 400 GB/s NVLink: 1 ms each).
  for (const LinkLoad& load : c.link_loads) {
    CAPTURE(r.cluster->link(load.link).name);
    REQUIRE(!load.samples.empty());
    double peak = 0;
    for (const auto& [at, bytes_per_s] : load.samples) {
      peak = std::max(peak, bytes_per_s);
    }
    CHECK(peak == hopsim::test::approx(50e9));
    CHECK(r.cluster->link(load.link).kind == topo::LinkKind::Nic);
    CHECK(load.samples.back().second == 0);  // idle at the end
  }
}
