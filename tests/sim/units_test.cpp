// Units: conversions round up, and meaningless arithmetic does not compile.
#include <type_traits>

#include <doctest/doctest.h>

#include "sim/units.hpp"

using hopsim::Bandwidth;
using hopsim::Bytes;
using hopsim::Time;

template <typename A, typename B>
concept Addable = requires(A a, B b) { a + b; };
template <typename A, typename B>
concept Multipliable = requires(A a, B b) { a * b; };

static_assert(!Addable<Bytes, Time>, "bytes + time must not compile");
static_assert(!Multipliable<Time, Time>, "time * time must not compile");
static_assert(!std::is_constructible_v<Time, std::int64_t>, "Time{123} must not compile");
static_assert(!std::is_convertible_v<Time, double>, "no implicit exit from Time");

TEST_CASE("time constructors are exact picoseconds") {
  CHECK(Time::ns(3).count_ps() == 3'000);
  CHECK(Time::us(2).count_ps() == 2'000'000);
  CHECK(Time::from_seconds(0.715e-6).count_ps() == 715'000);
  CHECK((Time::us(1) - Time::ns(1)).count_ps() == 999'000);
  CHECK(3 * Time::ps(7) == Time::ps(21));
}

TEST_CASE("transfer_time rounds up so that a transfer never ends early") {
  // 1 byte at 3e11 B/s is 3.33.. ps: rounds to 4.
  CHECK(transfer_time(Bytes{1}, Bandwidth{3e11}).count_ps() == 4);
  // Exact: 450 GB at 450 GB/s is one second.
  CHECK(transfer_time(Bytes{450'000'000'000}, Bandwidth::gigabytes_per_s(450)) ==
        Time::us(1'000'000));
  CHECK(transfer_time(Bytes{0}, Bandwidth{1}).count_ps() == 0);
}
