// splitmix64's finaliser: a fixed, portable 64-bit mix, for choices that must not vary by
// platform (ECMP's spine per flow, a kernel's drawn speed).
#pragma once

#include <cstdint>

namespace hopsim::sim {

/// A well-spread 64-bit value of `x`; the same on every platform.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31U);
}

}  // namespace hopsim::sim
