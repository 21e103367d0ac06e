// Integer helpers the closed forms share: a count as a double, a rounded-up division.
#pragma once

#include <cstdint>

namespace hopsim {

// A count as a double, for closed-form arithmetic: d(tokens) * d(hidden).
inline double d(std::int64_t v) { return static_cast<double>(v); }

// a / b rounded up, for a >= 0 and b > 0.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace hopsim
