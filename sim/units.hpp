// Strong types for the quantities the simulator adds and compares.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

#include "sim/assert.hpp"

namespace hopsim {

/// Simulated time: a signed count of picoseconds (2^63 ps is about 106 days).
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(std::int64_t n) { return Time{n}; }
  static constexpr Time ns(std::int64_t n) { return Time{n * 1'000}; }
  static constexpr Time us(std::int64_t n) { return Time{n * 1'000'000}; }
  static constexpr Time max() { return Time{std::numeric_limits<std::int64_t>::max()}; }
  /// Rounds up to the next picosecond, so that a converted duration is never short.
  /// `s` must be finite and within +-2^63 ps (about 106 days).
  static Time from_seconds_ceil(double s) { return Time{checked_ps(std::ceil(s * 1e12))}; }
  /// Rounds to the nearest picosecond: for config values, which are exact decimals.
  static Time from_seconds(double s) { return Time{checked_ps(std::round(s * 1e12))}; }

  constexpr std::int64_t count_ps() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  // Checked: inputs are bounded before a plan is built, so an overflow here is a bug, never a
  // silent wrap.
  friend constexpr Time operator+(Time a, Time b) { return Time{checked_add(a.ps_, b.ps_)}; }
  friend constexpr Time operator-(Time a, Time b) {
    std::int64_t r = 0;
    HOPSIM_ASSERT(!__builtin_sub_overflow(a.ps_, b.ps_, &r), "time {} - {} ps overflows", a.ps_,
                  b.ps_);
    return Time{r};
  }
  friend constexpr Time operator*(std::int64_t k, Time t) {
    std::int64_t r = 0;
    HOPSIM_ASSERT(!__builtin_mul_overflow(k, t.ps_, &r), "time {} x {} ps overflows", k, t.ps_);
    return Time{r};
  }
  constexpr Time& operator+=(Time b) {
    ps_ = checked_add(ps_, b.ps_);
    return *this;
  }
  // clang-tidy 14 misreads the defaulted <=> as a null-pointer comparison.
  friend constexpr auto operator<=>(Time, Time) = default;  // NOLINT(modernize-use-nullptr)

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  static constexpr std::int64_t checked_add(std::int64_t a, std::int64_t b) {
    std::int64_t r = 0;
    HOPSIM_ASSERT(!__builtin_add_overflow(a, b, &r), "time {} + {} ps overflows", a, b);
    return r;
  }
  // Converting a double outside int64's range is undefined behaviour: refuse it loudly.
  static std::int64_t checked_ps(double ps) {
    HOPSIM_ASSERT(std::isfinite(ps) && std::fabs(ps) < 9.2e18,
                  "{} ps is not a representable time (limit about 106 days)", ps);
    return static_cast<std::int64_t>(ps);
  }
  std::int64_t ps_ = 0;
};

constexpr double kPsPerSecond = 1e12;

/// A byte count (decimal prefixes elsewhere: 1 GB = 1e9 B).
struct Bytes {
  std::int64_t n = 0;
  /// Checked, like Time's: byte totals are bounded before a plan is built.
  friend constexpr Bytes operator+(Bytes a, Bytes b) {
    std::int64_t r = 0;
    HOPSIM_ASSERT(!__builtin_add_overflow(a.n, b.n, &r), "{} + {} bytes overflows", a.n, b.n);
    return Bytes{r};
  }
  friend constexpr Bytes operator*(Bytes a, std::int64_t k) {
    std::int64_t r = 0;
    HOPSIM_ASSERT(!__builtin_mul_overflow(a.n, k, &r), "{} bytes x {} overflows", a.n, k);
    return Bytes{r};
  }
  friend constexpr auto operator<=>(Bytes, Bytes) = default;  // NOLINT(modernize-use-nullptr)
};

/// Bytes per second. Decimal prefixes: 1 GB/s = 1e9 B/s.
struct Bandwidth {
  double bytes_per_s = 0;
  static constexpr Bandwidth gigabytes_per_s(double g) { return {g * 1e9}; }
  friend constexpr auto operator<=>(Bandwidth, Bandwidth) = default;
};

/// Floating-point operations, and their rate.
struct Flops {
  double n = 0;
};

struct FlopRate {
  double flops_per_s = 0;
};

/// Time to move `b` at `bw`, rounded up so that a transfer never ends early.
inline Time transfer_time(Bytes b, Bandwidth bw) {
  return Time::from_seconds_ceil(static_cast<double>(b.n) / bw.bytes_per_s);
}

/// `t` at `speed` of the rate it was priced at (0.95: 5% slower), rounded up.
inline Time at_speed(Time t, double speed) {
  return Time::ps(static_cast<std::int64_t>(std::ceil(static_cast<double>(t.count_ps()) / speed)));
}

/// Time to execute `f` at `rate`, rounded up.
inline Time compute_time(Flops f, FlopRate rate) {
  return Time::from_seconds_ceil(f.n / rate.flops_per_s);
}

}  // namespace hopsim
