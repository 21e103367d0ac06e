// Durations and byte counts as a summary shows them: in the unit that keeps the number between
// 1 and 1000 (the JSON report stays in seconds and bytes).
#pragma once

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace hopsim::tools {

/// "892.142 ms", "12.145 s", "715.000 ns": three decimals in ns, us, ms or s.
inline std::string human_time(double seconds) {
  const double a = std::fabs(seconds);
  if (a == 0) {
    return "0 s";
  }
  if (a < 1e-6) {
    return fmt::format("{:.3f} ns", seconds * 1e9);
  }
  if (a < 1e-3) {
    return fmt::format("{:.3f} us", seconds * 1e6);
  }
  if (a < 1) {
    return fmt::format("{:.3f} ms", seconds * 1e3);
  }
  return fmt::format("{:.3f} s", seconds);
}

/// "3.76 GB", "145.2 GB", "512 B": decimal units (10^3), three significant digits or more.
inline std::string human_bytes(double bytes) {
  constexpr const char* kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  std::size_t u = 0;
  while (std::fabs(bytes) >= 1000 && u + 1 < std::size(kUnits)) {
    bytes /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes)
                : fmt::format("{:.{}f} {}", bytes, std::fabs(bytes) < 100 ? 2 : 1, kUnits[u]);
}

}  // namespace hopsim::tools
