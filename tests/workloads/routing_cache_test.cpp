// The run's routing cache: what route_tokens makes, once per distinct input, shared after; a
// change of any input (seed, another field, the ranks' nodes) routes again, and so does a
// cleared cache.
#include "workloads/ep/routing_cache.hpp"

#include <memory>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/gpu_ids.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;
using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

topo::Spec h800(int nodes, int gpus_per_node) {
  topo::Spec spec;
  spec.nodes = nodes;
  spec.gpus_per_node = gpus_per_node;
  spec.nvlink = {Bandwidth::gigabytes_per_s(160), Time::ns(715), Bandwidth::gigabytes_per_s(200)};
  spec.nic = {Bandwidth::gigabytes_per_s(47), Time::ns(450), Bandwidth::gigabytes_per_s(50)};
  spec.gpu.name = "H800 SXM";
  spec.gpu.peak_bf16_tflops = 989;
  spec.gpu.peak_fp8_tflops = 1979;
  return spec;
}

bool same(const GroupTokens& a, const GroupTokens& b) {
  return a.tokens.gpu.bytes == b.tokens.gpu.bytes &&
         a.tokens.selections.bytes == b.tokens.selections.bytes &&
         a.tokens.to_node == b.tokens.to_node && a.tokens.nodes == b.tokens.nodes &&
         a.load.expert_tokens == b.load.expert_tokens && a.load.slot_tokens == b.load.slot_tokens &&
         a.load.dropped == b.load.dropped;
}

GroupTokens direct(const std::vector<topo::GpuId>& ranks, const topo::Cluster& cluster,
                   const MoeRouting& r) {
  GroupTokens out;
  out.tokens = route_tokens(ranks, cluster, r, Bytes{1}, &out.load);
  return out;
}

}  // namespace

TEST_CASE("routing cache: route_tokens' routing, made once and shared for equal inputs") {
  const topo::Cluster cluster(h800(8, 8));
  const std::vector<topo::GpuId> ranks = hopsim::test::first_gpus(64);
  MoeRouting r{256, 256, 8, 4, 3};
  RoutingCache cache;
  const std::shared_ptr<const GroupTokens> first = cache.route(ranks, cluster, r);
  CHECK(same(*first, direct(ranks, cluster, r)));
  CHECK(cache.route(ranks, cluster, r) == first);  // the same object: not routed again
  CHECK(same(*route_group(nullptr, ranks, cluster, r), *first));
  CHECK(route_group(&cache, ranks, cluster, r) == first);

  MoeRouting seed = r;
  seed.seed = 4;
  MoeRouting capped = r;  // the same seed, another field
  capped.capacity_factor = 1.0;
  for (const MoeRouting& other : {seed, capped}) {
    const std::shared_ptr<const GroupTokens> again = cache.route(ranks, cluster, other);
    CHECK(again != first);
    CHECK(same(*again, direct(ranks, cluster, other)));
    CHECK_FALSE(same(*again, *first));
  }
  // The same ranks four to a node: another layout, so another routing, not the cached one.
  const topo::Cluster fours(h800(16, 4));
  const std::shared_ptr<const GroupTokens> spread = cache.route(ranks, fours, r);
  CHECK(same(*spread, direct(ranks, fours, r)));
  CHECK(spread->tokens.nodes == 16);
  CHECK(cache.route(ranks, cluster, r) == first);
  // Cleared, the cache routes again; what it handed out before lives on where it is held.
  cache.clear();
  const std::shared_ptr<const GroupTokens> after = cache.route(ranks, cluster, r);
  CHECK(after != first);
  CHECK(same(*after, *first));
}

TEST_CASE("routing cache: requests from two threads at once share one routing per input") {
  const topo::Cluster cluster(h800(4, 8));
  const std::vector<topo::GpuId> ranks = hopsim::test::first_gpus(32);
  RoutingCache cache;
  std::vector<MoeRouting> inputs;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    inputs.push_back(MoeRouting{128, 64, 6, 2, seed});
  }
  std::vector<std::shared_ptr<const GroupTokens>> got[2];
  const auto ask = [&](int t) {
    for (const MoeRouting& r : inputs) {
      got[t].push_back(cache.route(ranks, cluster, r));
    }
  };
  std::thread a(ask, 0);
  std::thread b(ask, 1);
  a.join();
  b.join();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    CAPTURE(i);
    CHECK(got[0][i] == got[1][i]);
    CHECK(same(*got[0][i], direct(ranks, cluster, inputs[i])));
  }
}
