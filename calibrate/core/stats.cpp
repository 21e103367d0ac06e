// Percentiles by linear interpolation and the IQR-based stop rule.
#include "calibrate/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "calibrate/core/types.hpp"

namespace hopsim::calib {

double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) {
    throw CalibError("percentile of an empty sample set");
  }
  std::sort(samples.begin(), samples.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(samples.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, samples.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return samples[lo] + (samples[hi] - samples[lo]) * frac;
}

Summary summarize(const std::vector<double>& samples_us, double drop_fraction) {
  if (samples_us.empty()) {
    throw CalibError("summary of an empty sample set");
  }
  auto drop =
      static_cast<std::size_t>(std::floor(drop_fraction * static_cast<double>(samples_us.size())));
  drop = std::min(drop, samples_us.size() - 1);
  const std::vector<double> kept(samples_us.begin() + static_cast<std::ptrdiff_t>(drop),
                                 samples_us.end());
  return Summary{percentile(kept, 0.5), percentile(kept, 0.1), percentile(kept, 0.9), kept.size()};
}

bool should_stop(const std::vector<double>& samples_us, const StopRule& rule) {
  const std::size_t n = samples_us.size();
  if (n >= rule.max_samples) {
    return true;
  }
  const double timed_ms = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / 1000.0;
  if (n > 0 && timed_ms >= rule.max_timed_ms) {
    return true;
  }
  if (n < rule.min_samples) {
    return false;
  }
  const double median = percentile(samples_us, 0.5);
  const double halfwidth = 0.5 * (percentile(samples_us, 0.75) - percentile(samples_us, 0.25));
  return median > 0.0 && halfwidth <= rule.rel_halfwidth * median;
}

}  // namespace hopsim::calib
