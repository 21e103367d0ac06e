// Skipping GPU-execution tests on machines without a CUDA device.
//
// Tests that need a device carry `* doctest::skip(hopsim::calib::test::no_gpu())`, so a plain run
// lists them as skipped, and start with HOPSIM_REQUIRE_GPU(), which prints
// "SKIPPED: no CUDA device: ..." and returns; ctest (running with --no-skip) matches that line
// and reports the test as skipped rather than passed.
#pragma once

#include <optional>
#include <string>

#include <doctest/doctest.h>

#include "calibrate/backend/device.hpp"

namespace hopsim::calib::test {

inline const std::optional<std::string>& no_gpu_reason() {
  static const std::optional<std::string> reason = device_unavailable_reason();
  return reason;
}

inline bool no_gpu() {
  return no_gpu_reason().has_value();
}

}  // namespace hopsim::calib::test

#define HOPSIM_REQUIRE_GPU()                                           \
  do {                                                                 \
    if (::hopsim::calib::test::no_gpu()) {                             \
      MESSAGE("SKIPPED: " << *::hopsim::calib::test::no_gpu_reason()); \
      return;                                                          \
    }                                                                  \
  } while (false)
