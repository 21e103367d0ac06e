// Clocks, temperature and power during a run: a sample per grid point, the rule that re-measures
// a point whose SM clock fell more than 3% below the run's start (once, flagged), and the
// min/median summary the table keeps.
//
// The samples come from NVML (libnvidia-ml.so.1, the driver's library), loaded with dlopen at run
// time: the harness builds and dry-runs on machines without the driver, and a run there simply
// has no clock samples. Tests use a fake sampler.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace hopsim::calib {

struct ClockSample {
  double sm_mhz = 0;
  double mem_mhz = 0;
  double temp_c = 0;
  double power_w = 0;
};

class ClockSampler {
 public:
  virtual ~ClockSampler() = default;
  /// The device's clocks now; none when they cannot be read.
  virtual std::optional<ClockSample> sample() = 0;
};

/// NVML on GPU 0, or null with the reason (no libnvidia-ml.so.1, nvmlInit failed, ...).
std::unique_ptr<ClockSampler> make_nvml_sampler(std::string& why_not);

/// A point's SM clock more than this fraction below the start's is re-measured (once).
inline constexpr double kClockDropLimit = 0.03;

/// What the run does about one point's clocks.
struct PointClocks {
  std::optional<ClockSample> sample;  ///< after the (last) measurement
  bool remeasured = false;
  bool throttled = false;  ///< still more than 3% down after the re-measurement: flagged
};

/// The clock log of a run: the start sample, every point's, the re-measure rule.
class ClockLog {
 public:
  /// `sampler` may be null (no NVML): then nothing is sampled and nothing re-measured.
  explicit ClockLog(ClockSampler* sampler);

  /// Samples the run's start (call after the warm-up before the grid).
  void start();
  /// Whether `s` is more than kClockDropLimit below the start's SM clock.
  bool dropped(const ClockSample& s) const;

  /// Runs `measure`, samples; when the clock dropped, runs it once more and samples again.
  /// Records the point under `label` and returns what happened.
  template <typename Measure>
  PointClocks around(const std::string& label, Measure&& measure) {
    measure();
    PointClocks p{sample(), false, false};
    if (p.sample && dropped(*p.sample)) {
      p.remeasured = true;
      measure();
      p.sample = sample();
      p.throttled = p.sample && dropped(*p.sample);
    }
    record(label, p);
    return p;
  }

  const std::vector<std::pair<std::string, PointClocks>>& points() const { return points_; }
  std::optional<ClockSample> start_sample() const { return start_; }

  /// The table's device.clocks_mhz: sm_start, sm_min, sm_median, mem_min, mem_median (null when
  /// nothing was sampled).
  nlohmann::json clocks_mhz() const;
  /// Flat method fields: clock_source, temp_c_max, power_w_median, points_remeasured,
  /// points_throttled.
  nlohmann::json method_fields() const;
  /// One line per point: label, SM and memory MHz, °C, W, remeasured, throttled (CSV).
  std::string csv() const;

 private:
  std::optional<ClockSample> sample();
  void record(const std::string& label, const PointClocks& p);

  ClockSampler* sampler_;
  std::optional<ClockSample> start_;
  std::vector<std::pair<std::string, PointClocks>> points_;
};

/// The median of `v` (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> v);

}  // namespace hopsim::calib
