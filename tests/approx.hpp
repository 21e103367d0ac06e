// Relative comparisons for doctest: approx(x).epsilon(e) accepts |a - x| < e * max(|a|, |x|).
// doctest::Approx adds a scale of 1 to that bound, so for values below 1 (seconds, fractions,
// ratios) its epsilon is an absolute tolerance: Approx(0.003).epsilon(0.005) accepts 0.007.
// Tests compare through approx() so that a relative tolerance is one at any magnitude; a value
// expected to be 0 is compared exactly, or with an explicit absolute bound.
#pragma once

#include <doctest/doctest.h>

namespace hopsim::test {

inline doctest::Approx approx(double expected) {
  return doctest::Approx(expected).scale(0);
}

}  // namespace hopsim::test
