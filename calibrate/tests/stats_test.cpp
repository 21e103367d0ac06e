// Percentiles, summaries and the stop rule.
#include "calibrate/core/stats.hpp"

#include <doctest/doctest.h>

#include "calibrate/core/types.hpp"
#include "tests/approx.hpp"

namespace hopsim::calib {

TEST_CASE("percentile interpolates linearly between order statistics") {
  const std::vector<double> v{4, 1, 3, 2, 5};
  CHECK(percentile(v, 0.5) == 3.0);
  CHECK(percentile(v, 0.0) == 1.0);
  CHECK(percentile(v, 1.0) == 5.0);
  CHECK(percentile(v, 0.1) == hopsim::test::approx(1.4));
  CHECK(percentile({1, 2, 3, 4}, 0.5) == 2.5);
  CHECK(percentile({7}, 0.9) == 7.0);
  CHECK_THROWS_AS(percentile({}, 0.5), CalibError);
}

TEST_CASE("summary drops the first samples as warm-up") {
  std::vector<double> v(20, 10.0);
  v[0] = 1000.0;  // a cold first sample
  const Summary s = summarize(v, 0.05);
  CHECK(s.n == 19);
  CHECK(s.median_us == 10.0);
  CHECK(s.p90_us == 10.0);
  const Summary all = summarize({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.0);
  CHECK(all.median_us == 5.5);
  CHECK(all.p10_us == hopsim::test::approx(1.9));
  CHECK(all.p90_us == hopsim::test::approx(9.1));
}

TEST_CASE("stop rule: min samples, convergence, caps") {
  StopRule rule;
  rule.min_samples = 10;
  rule.max_samples = 50;
  rule.rel_halfwidth = 0.01;
  rule.max_timed_ms = 1000.0;
  CHECK_FALSE(should_stop(std::vector<double>(9, 100.0), rule));
  CHECK(should_stop(std::vector<double>(10, 100.0), rule));
  std::vector<double> noisy;
  noisy.reserve(50);
  for (int i = 0; i < 20; ++i) {
    noisy.push_back(i % 2 == 0 ? 100.0 : 110.0);  // IQR half-width 5 % of the median
  }
  CHECK_FALSE(should_stop(noisy, rule));
  noisy.resize(50, 100.0);
  CHECK(should_stop(noisy, rule));  // max_samples
  rule.max_timed_ms = 1.0;
  CHECK(should_stop({600.0, 700.0}, rule));  // 1.3 ms of timed work exceeds the budget
}

}  // namespace hopsim::calib
