// Sample statistics of a timed point: percentiles, the summary stored in the table, the stop rule.
#pragma once

#include <cstddef>
#include <vector>

namespace hopsim::calib {

/// Linear-interpolation percentile (numpy's default) of unsorted samples, q in [0, 1].
/// Throws CalibError on an empty sample set.
double percentile(std::vector<double> samples, double q);

/// What the table keeps for one cell.
struct Summary {
  double median_us = 0.0;
  double p10_us = 0.0;
  double p90_us = 0.0;
  std::size_t n = 0;
};

/// Summary of samples after dropping the first `drop_fraction` of them as extra warm-up.
Summary summarize(const std::vector<double>& samples_us, double drop_fraction = 0.05);

/// When to stop sampling one point (calibrate/README.md, "Timing"): at least `min_samples`, then stop as soon
/// as the half-width of the p25..p75 range is within `rel_halfwidth` of the median, or when
/// `max_samples` or `max_timed_ms` of measured device time is reached.
struct StopRule {
  std::size_t min_samples = 10;
  std::size_t max_samples = 200;
  double rel_halfwidth = 0.01;
  double max_timed_ms = 500.0;
};

/// True when `samples_us` (in collection order) satisfy the stop rule.
bool should_stop(const std::vector<double>& samples_us, const StopRule& rule);

}  // namespace hopsim::calib
