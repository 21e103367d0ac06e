// Plans carry what reports need: streams in issue order, labels, FLOPs and sources, routes.
#include "doctest_time.hpp"
#include "tests/approx.hpp"
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
  const auto wait = plan.add_delay(0, Time::us(10));
  const auto a = plan.add_compute({.gpu = 0, .duration = Time::us(2), .label = "a"});
  const auto b = plan.add_compute({.gpu = 0, .duration = Time::us(3), .label = "b"});
  const auto c = plan.add_compute({.gpu = 0, .duration = Time::us(1), .stream = side});
  const auto d = plan.add_compute({.gpu = 1, .duration = Time::us(1)});  // another GPU
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
  plan.add_compute({.gpu = 0, .duration = Time::us(30), .flops = Flops{3e12},
                    .source = Source::Exact});
  plan.add_compute({.gpu = 1, .duration = Time::us(10), .flops = Flops{1e12},
                    .source = Source::Roofline});
  const Outcome out = simulate(cluster, plan);
  const Summary s = summarize(cluster, plan, out);
  CHECK(s.flops.n == hopsim::test::approx(4e12));
  CHECK(s.compute_sources.share(Source::Exact) == hopsim::test::approx(0.75));
  CHECK(s.compute_sources.share(Source::Roofline) == hopsim::test::approx(0.25));
}

TEST_CASE("a flow with an explicit route takes it instead of the topology's") {
  // Cross-rail from GPU 0 (node 0) to GPU 9 (node 1): the topology routes over NVLink first
  // (PXN); an explicit route may go NIC, leaf, spine, leaf, NIC instead.
  topo::Spec spec;
  spec.nodes = 2;
  const topo::Cluster cluster(spec);
  const topo::Route pxn = cluster.route(0, 9);
  spec.cross_rail = topo::CrossRail::Spine;
  const topo::Route spine = topo::Cluster(spec).route(0, 9);
  Plan plan;
  const auto f = plan.add_flow(0, 9, Bytes{1'000'000});
  plan.set_route(f, spine.span());
  const auto g = plan.add_flow(0, 9, Bytes{1'000'000});
  const Outcome out = simulate(cluster, plan);
  CHECK(std::vector<topo::LinkId>(out.route(f).begin(), out.route(f).end()) ==
        std::vector<topo::LinkId>(spine.span().begin(), spine.span().end()));
  CHECK(std::vector<topo::LinkId>(out.route(g).begin(), out.route(g).end()) ==
        std::vector<topo::LinkId>(pxn.span().begin(), pxn.span().end()));
  CHECK(out.latency[f] == cluster.latency(spine.span()));
}
