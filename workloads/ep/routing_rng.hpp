// The routing's random numbers: xoshiro256** (Blackman and Vigna), seeded through splitmix64.
// Its output is fixed by its definition on every platform (as mt19937_64's is by the standard),
// and a draw costs a few instructions: routing a DeepSeek-V3 EP64 layer makes ~3 million
// draws, and with mt19937_64 they took a fifth of a sweep point's time.
#pragma once

#include <cstdint>
#include <limits>

namespace hopsim::work {

class RoutingRng {
 public:
  using result_type = std::uint64_t;

  explicit RoutingRng(std::uint64_t seed) {
    for (std::uint64_t& s : s_) {  // splitmix64: distinct, well-mixed words for any seed
      seed += 0x9E3779B97F4A7C15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      s = z ^ (z >> 31);
    }
  }

  static constexpr result_type min() { return 0; }

  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  result_type operator()() {
    const std::uint64_t out = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return out;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  std::uint64_t s_[4]{};
};

/// A uniform double in [0, 1) from 53 bits of the generator (the same on every platform).
inline double unit(RoutingRng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace hopsim::work
