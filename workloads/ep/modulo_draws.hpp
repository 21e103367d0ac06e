// rng() % n without a division: the routing's draws, hundreds of millions in a sweep, spent
// most of their time in the 64-bit division.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "workloads/ep/routing_rng.hpp"

namespace hopsim::work {

/// Draws rng() % n for n up to `most`, exactly (the same numbers as the modulo), by Barrett
/// reduction: with m = floor((2^64 - 1) / n), q = floor(x m / 2^64) is
/// x / n rounded down or up to 2 short, and x - q n is fixed by at most two subtractions. m is
/// tabulated per n; n above `most` falls back to the modulo. The generator is an argument, not
/// a member, so that a caller may keep its state in a local (in registers) across many draws.
class ModuloDraws {
  __extension__ typedef unsigned __int128 Wide;

 public:
  explicit ModuloDraws(std::uint64_t most) : m_(most + 1, 0) {
    for (std::uint64_t n = 1; n <= most; ++n) {
      m_[n] = std::numeric_limits<std::uint64_t>::max() / n;
    }
  }

  /// rng() % n; n > 0.
  std::uint64_t operator()(RoutingRng& rng, std::uint64_t n) const {
    const std::uint64_t x = rng();
    return n < m_.size() ? reduce(x, n, m_[n]) : x % n;
  }

  /// x % n given m = floor((2^64 - 1) / n).
  static std::uint64_t reduce(std::uint64_t x, std::uint64_t n, std::uint64_t m) {
    const auto q = static_cast<std::uint64_t>((static_cast<Wide>(x) * m) >> 64);
    std::uint64_t r = x - q * n;
    while (r >= n) {
      r -= n;
    }
    return r;
  }

 private:
  std::vector<std::uint64_t> m_;  ///< per n: floor((2^64 - 1) / n)
};

/// Picks the first `k` of `pool` at random (partial Fisher-Yates). RoutingRng's sequence is
/// fixed by its definition; std distributions are not, so positions are drawn by modulo.
inline void pick(const ModuloDraws& draws, RoutingRng& rng, std::span<int> pool, std::size_t k) {
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t j = i + static_cast<std::size_t>(draws(rng, pool.size() - i));
    std::swap(pool[i], pool[j]);
  }
}

/// Puts back 0, 1, ..., n - 1 into a pool that held them before pick() took its first `k`, in
/// O(k): a value v >= k moves only when pick() takes it (to a position below k), so the
/// positions at or above k that changed are the values at or above k among the first k.
inline void unpick(std::span<int> pool, std::size_t k) {
  for (std::size_t i = 0; i < k; ++i) {
    const auto v = static_cast<std::size_t>(pool[i]);
    if (v >= k) {
      pool[v] = static_cast<int>(v);
    }
    pool[i] = static_cast<int>(i);
  }
}

}  // namespace hopsim::work
