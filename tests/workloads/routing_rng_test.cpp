// The routing's generator and its division-free modulo: deterministic, spread evenly, and
// ModuloDraws returns exactly rng() % n; unpick() undoes pick() on 0, 1, ..., n - 1.
#include "workloads/ep/routing_rng.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include <doctest/doctest.h>

#include "workloads/ep/modulo_draws.hpp"

using hopsim::work::ModuloDraws;
using hopsim::work::pick;
using hopsim::work::RoutingRng;
using hopsim::work::unpick;

TEST_CASE("routing rng: a seed fixes the sequence, seeds differ, draws spread evenly") {
  RoutingRng a(42);
  RoutingRng b(42);
  RoutingRng c(43);
  int same_as_c = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t x = a();
    CHECK(x == b());
    same_as_c += x == c() ? 1 : 0;
  }
  CHECK(same_as_c == 0);
  // Chi-square over 16 buckets of 160,000 draws (top bits and low bits): 15 degrees of
  // freedom, 0.1% critical value 37.7.
  for (int shift : {0, 60}) {
    CAPTURE(shift);
    RoutingRng rng(7);
    std::array<int, 16> bucket{};
    const int draws = 160000;
    for (int i = 0; i < draws; ++i) {
      ++bucket[static_cast<std::size_t>((rng() >> shift) & 15U)];
    }
    double chi2 = 0;
    for (int count : bucket) {
      const double d = count - draws / 16.0;
      chi2 += d * d / (draws / 16.0);
    }
    CHECK(chi2 < 37.7);
  }
}

TEST_CASE("modulo draws: exactly rng() % n, for every n it tabulates and beyond") {
  const std::uint64_t most = 300;
  RoutingRng reference(11);
  RoutingRng rng(11);
  const ModuloDraws draws(most);
  for (std::uint64_t round = 0; round < 20000; ++round) {
    const std::uint64_t n = 1 + round % (most + 50);  // past `most`: the plain modulo
    CHECK(draws(rng, n) == reference() % n);
  }
  // The largest x and the multiples of n, where the estimate of x / n is furthest off.
  for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{7}, std::uint64_t{128},
                          std::uint64_t{255}, most}) {
    const std::uint64_t top = std::numeric_limits<std::uint64_t>::max();
    for (std::uint64_t x :
         {top, top - 1, top / n * n, top / n * n - 1, n - 1, n, std::uint64_t{0}}) {
      CAPTURE(n);
      CAPTURE(x);
      CHECK(ModuloDraws::reduce(x, n, top / n) == x % n);
    }
  }
}

TEST_CASE("unpick: after pick() takes k of 0, 1, ..., n - 1, the pool holds them in order again") {
  RoutingRng rng(5);
  const ModuloDraws draws(40);
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{8}, std::size_t{40}}) {
    std::vector<int> identity(n);
    std::iota(identity.begin(), identity.end(), 0);
    std::vector<int> pool = identity;
    int moved = 0;  // rounds whose pick changed the pool
    for (int round = 0; round < 200; ++round) {
      const std::size_t k = static_cast<std::size_t>(round) % (n + 1);
      pick(draws, rng, std::span<int>(pool), k);
      moved += pool != identity ? 1 : 0;
      CAPTURE(n);
      CAPTURE(k);
      unpick(std::span<int>(pool), k);
      CHECK(pool == identity);
    }
    if (n == 1) {
      CHECK(moved == 0);  // one value: nothing to move
    } else {
      CHECK(moved > 50);
    }
  }
}
