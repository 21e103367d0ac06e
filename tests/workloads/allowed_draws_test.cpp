// AllowedDraws: the expert draw_allowed (the definition, a walk over every expert) draws, for
// the same generator, whether its cached sums decide or it walks, over skews and allowed sets.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "workloads/ep/allowed_draws.hpp"
#include "workloads/ep/popularity.hpp"

using namespace hopsim::work;

namespace {

// Routings from even to extreme (Zipf s = 8, a Dirichlet whose weights underflow, zero counts).
std::vector<MoeRouting> skews() {
  std::vector<MoeRouting> out;
  for (const double s : {0.0, 1.0, 4.0, 8.0}) {
    MoeRouting r{1, 64, 8, 4, 1};
    r.distribution = RoutingDistribution::Zipf;
    r.zipf_s = s;
    out.push_back(r);
  }
  MoeRouting dirichlet{1, 64, 8, 4, 1};
  dirichlet.distribution = RoutingDistribution::Dirichlet;
  dirichlet.dirichlet_alpha = 0.01;
  out.push_back(dirichlet);
  MoeRouting counts{1, 16, 2, 4, 1};
  counts.distribution = RoutingDistribution::Counts;
  counts.counts = {0, 5, 0, 0, 1e-300, 3, 0, 7, 7, 0, 1, 0, 0, 2, 0, 0};
  out.push_back(counts);
  return out;
}

}  // namespace

TEST_CASE("allowed draws: the expert draw_allowed draws, from the same generator state") {
  for (const MoeRouting& r : skews()) {
    const Popularity p = weights(r);
    const int experts = static_cast<int>(r.experts);
    AllowedDraws fast(p);
    RoutingRng pick_sets(7);
    RoutingRng a(11);
    RoutingRng b(11);
    int draws = 0;
    // Few distinct sets, each drawn from many times (the cache's hits), and a key-less draw.
    for (int set = 0; set < 12; ++set) {
      std::vector<int> key;  // the disallowed experts, sorted by construction
      for (int e = 0; e < experts; ++e) {
        if (pick_sets() % 4 == 0) {
          key.push_back(e);
        }
      }
      key.push_back(-2);
      const auto allowed = [&key](int e) {
        return !std::binary_search(key.begin(), key.end() - 1, e);
      };
      for (int i = 0; i < 2000; ++i) {
        const int want = draw_allowed(a, p, allowed);
        const int got = fast.draw(b, i % 500 == 0 ? std::vector<int>{} : key, allowed);
        REQUIRE(got == want);
        ++draws;
      }
      REQUIRE(a() == b());  // each consumed one number per draw
      REQUIRE(a() == b());
    }
    CHECK(draws == 24000);
    CHECK(fast.walks() < 100);  // the sums decide all but draws at a boundary's rounding
  }
}

TEST_CASE("allowed draws: none allowed is -1, one allowed is that one") {
  MoeRouting r{1, 8, 2, 4, 1};
  r.distribution = RoutingDistribution::Zipf;
  r.zipf_s = 8;
  const Popularity p = weights(r);
  AllowedDraws fast(p);
  RoutingRng rng(3);
  CHECK(fast.draw(rng, {1}, [](int) { return false; }) == -1);
  for (int i = 0; i < 10; ++i) {
    CHECK(fast.draw(rng, {2}, [](int e) { return e == 5; }) == 5);
  }
}
