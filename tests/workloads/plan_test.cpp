// Plans carry what reports need: streams in issue order, labels, FLOPs and sources, routes.
#include "doctest_time.hpp"
#include "tests/approx.hpp"
#include "workloads/ep/hbm_sharing.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/summary.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Flops;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

TEST_CASE("compute tasks on one stream run in issue order, other streams run alongside") {
  const topo::Cluster cluster(topo::Spec{});
  Plan plan;
  const StreamIndex side = plan.add_stream("side");
  CHECK(plan.streams() == std::vector<std::string>{"compute", "comm", "side"});
  const auto wait = plan.add_delay(topo::GpuId{0}, Time::us(10));
  const auto a = plan.add_compute({.gpu = topo::GpuId{0}, .duration = Time::us(2), .label = "a"});
  const auto b = plan.add_compute({.gpu = topo::GpuId{0}, .duration = Time::us(3), .label = "b"});
  const auto c = plan.add_compute({.gpu = topo::GpuId{0}, .duration = Time::us(1), .stream = side});
  const auto d = plan.add_compute({.gpu = topo::GpuId{1}, .duration = Time::us(1)});  // another GPU
  plan.add_dependency(wait, a);
  const Outcome out = simulate(cluster, plan);
  CHECK(out.times[a].start == Time::us(10));
  CHECK(out.times[b].start == Time::us(12));  // ready at 0, but issued after a
  CHECK(out.times[c].end == Time::us(1));
  CHECK(out.times[d].end == Time::us(1));
  CHECK(plan.label(plan.tasks()[b]) == "b");
}

TEST_CASE("the summary adds up FLOPs and compute time per source") {
  const topo::Cluster cluster(topo::Spec{});
  Plan plan;
  plan.add_compute({.gpu = topo::GpuId{0},
                    .duration = Time::us(30),
                    .flops = Flops{3e12},
                    .source = Source::Exact});
  plan.add_compute({.gpu = topo::GpuId{1},
                    .duration = Time::us(10),
                    .flops = Flops{1e12},
                    .source = Source::Roofline});
  const Outcome out = simulate(cluster, plan);
  const Summary s = summarize(cluster, plan, out);
  CHECK(s.flops.n == hopsim::test::approx(4e12));
  CHECK(s.compute_sources.share(Source::Exact) == hopsim::test::approx(0.75));
  CHECK(s.compute_sources.share(Source::Roofline) == hopsim::test::approx(0.25));
}

TEST_CASE("a flow through the NICs alone takes them inside a node, and moves with its plan") {
  // GPU 0 to GPU 1 of one node: the topology routes over NVLink; through the NICs alone it is
  // GPU 0's NIC up to rail 0's leaf, through the spine to rail 1's, and GPU 1's NIC down
  // (DeepEP's low-latency kernels).
  topo::Spec spec;
  spec.nodes = 2;
  const topo::Cluster cluster(spec);
  const auto ids = [](topo::Route r) {
    return std::vector<topo::LinkId>(r.span().begin(), r.span().end());
  };
  Plan plan;
  const auto f = plan.add_flow(topo::GpuId{0}, topo::GpuId{1}, Bytes{1'000'000});
  plan.set_nics_only(f);
  const auto g = plan.add_flow(topo::GpuId{0}, topo::GpuId{1}, Bytes{1'000'000});
  const Outcome out = simulate(cluster, plan);
  const topo::Route nics = cluster.nic_route(topo::GpuId{0}, topo::GpuId{1});
  CHECK(std::vector<topo::LinkId>(out.route(f).begin(), out.route(f).end()) == ids(nics));
  CHECK(std::vector<topo::LinkId>(out.route(g).begin(), out.route(g).end()) ==
        ids(cluster.route(topo::GpuId{0}, topo::GpuId{1})));
  CHECK(out.latency[f] == cluster.latency(nics.span()));
  CHECK(nics.size == 4);
  // Moved to GPUs 9 and 10, it takes their NICs.
  Plan moved;
  const std::vector<topo::GpuId> at = {topo::GpuId{9}, topo::GpuId{10}};
  moved.append(plan, at);
  const Outcome there = simulate(cluster, moved);
  CHECK(std::vector<topo::LinkId>(there.route(f).begin(), there.route(f).end()) ==
        ids(cluster.nic_route(topo::GpuId{9}, topo::GpuId{10})));
}

namespace {

// A summary after `units` identical units: rank 0 busy 3 + 4 per unit (computing 3 per unit),
// rank 1 busy 2 + 5 per unit; a first phase over the first unit, a second after every unit.
Summary after_units(std::int64_t units) {
  Summary s;
  s.step = Time::us(2 + 5 * units);
  s.ranks = {{Time::us(3 + 4 * units), Time::us(3 * units), Time::us(units), Time::us(3 + units)},
             {Time::us(2 + 5 * units), Time::us(5 * units), Time::us(0), Time::us(2)}};
  s.involved = 2;
  s.critical_rank = topo::GpuId{units >= 2 ? 1 : 0};
  s.nvlink_bytes = Bytes{100 * units};
  s.flops.n = 1e9 * static_cast<double>(units);
  s.compute_kernels.add(KernelClass::GemmFprop, Time::us(8 * units));
  s.phases = {{Time::us(0), Time::us(5), Time::us(3), Time::us(1), Time::us(0)},
              {Time::us(5 * units), Time::us(6 * units), Time::us(units), Time::us(0),
               Time::us(0)}};
  return s;
}

}  // namespace

TEST_CASE("summary.extrapolate: a steady run's figures after more units, in closed form") {
  CHECK(steady(after_units(2), after_units(3), after_units(4)));
  const Summary s = extrapolate(after_units(3), after_units(4), 6);  // 10 units
  const Summary whole = after_units(10);
  CHECK(s.step == whole.step);
  CHECK(s.ranks[0].busy == whole.ranks[0].busy);
  CHECK(s.ranks[1].compute == whole.ranks[1].compute);
  CHECK(s.critical_rank == topo::GpuId{1});
  CHECK(s.mean_busy_s == hopsim::test::approx((43e-6 + 52e-6) / 2));
  CHECK(s.nvlink_bytes.n == 1000);
  CHECK(s.flops.n == hopsim::test::approx(1e10));
  CHECK(s.compute_kernels.time(KernelClass::GemmFprop) == Time::us(80));
  CHECK(s.phases[0].start == Time::us(0));  // the first unit's phase stays where it was...
  CHECK(s.phases[1].start == Time::us(50));  // ... one after every unit moves on
  CHECK(s.phases[1].end == Time::us(60));
  // A run whose last unit added something else is not steady.
  Summary drift = after_units(4);
  drift.ranks[0].busy = drift.ranks[0].busy + Time::ps(1);
  CHECK_FALSE(steady(after_units(2), after_units(3), drift));
  Summary late = after_units(4);
  late.phases[1].end = late.phases[1].end + Time::ps(1);
  CHECK_FALSE(steady(after_units(2), after_units(3), late));
}

TEST_CASE("exchanges beside compute take HBM from the memory-bound kernels, by bytes over time") {
  // 1 GB from GPU 0 to GPU 1 while they compute 4 ms in all: read at one end and written at
  // the other, each twice (the link and the kernel's staging), 4 GB over 4 ms = 1 TB/s, so 1 /
  // 3.35 of HBM.
  Plan plan;
  plan.add_flow(topo::GpuId{0}, topo::GpuId{1}, Bytes{1'000'000'000});
  const auto norm = plan.add_compute(
      {.gpu = topo::GpuId{0}, .duration = Time::us(1000), .kind = KernelClass::Norm});
  const auto gemm = plan.add_compute(
      {.gpu = topo::GpuId{0}, .duration = Time::us(1000), .kind = KernelClass::GemmFprop});
  const auto cast = plan.add_compute(
      {.gpu = topo::GpuId{1}, .duration = Time::us(2000), .kind = KernelClass::Fp8Cast});
  const double share = exchange_hbm_share(plan, 3.35e12);
  CHECK(share == hopsim::test::approx(1.0 / 3.35).epsilon(1e-12));
  share_hbm(plan, share);
  CHECK(plan.tasks()[norm].duration.seconds() ==
        hopsim::test::approx(1e-3 / (1 - share)).epsilon(1e-9));
  CHECK(plan.tasks()[gemm].duration == Time::us(1000));  // bound by its SMs
  CHECK(plan.tasks()[cast].duration.seconds() ==
        hopsim::test::approx(2e-3 / (1 - share)).epsilon(1e-9));
  // At most half of HBM; none without compute or without exchanges.
  plan.add_flow(topo::GpuId{1}, topo::GpuId{0}, Bytes{100'000'000'000});
  CHECK(exchange_hbm_share(plan, 3.35e12) == 0.5);
  Plan idle;
  idle.add_flow(topo::GpuId{0}, topo::GpuId{1}, Bytes{1000});
  CHECK(exchange_hbm_share(idle, 3.35e12) == 0.0);
  Plan alone;
  alone.add_compute(
      {.gpu = topo::GpuId{0}, .duration = Time::us(1000), .kind = KernelClass::Norm});
  CHECK(exchange_hbm_share(alone, 3.35e12) == 0.0);
}
