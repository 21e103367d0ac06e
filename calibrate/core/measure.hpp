// The measurement loop of one point, written against an abstract timer so tests can mock it.
//
// Per point: warm-up reps (start → op → stop, discarded) until at least `warmup_reps` and
// `warmup_ms` of device time; then per timed rep: flush → start → op → stop → elapsed, until the
// stop rule holds. The L2 flush sits outside the start/stop window.
#pragma once

#include <functional>
#include <vector>

#include "calibrate/core/stats.hpp"

namespace hopsim::calib {

/// What a device provides to the loop. The CUDA implementation records events on one stream.
class TimerBackend {
 public:
  virtual ~TimerBackend();
  /// Evicts the device cache (e.g. a 256 MB memset); enqueued before `start`.
  virtual void flush() = 0;
  virtual void start() = 0;
  virtual void stop() = 0;
  /// Microseconds between the last start and stop; waits for the stop.
  virtual double elapsed_us() = 0;
};

struct MeasureConfig {
  std::size_t warmup_reps = 3;
  double warmup_ms = 25.0;
  /// Hard cap on warm-up reps, so a mis-reporting timer cannot loop forever.
  std::size_t max_warmup_reps = 10000;
  StopRule stop;
};

struct Measurement {
  Summary summary;
  std::vector<double> samples_us;
  std::size_t warmup_reps = 0;
};

/// Runs `op` under `timer` as described above.
Measurement measure(TimerBackend& timer, const std::function<void()>& op,
                    const MeasureConfig& config);

}  // namespace hopsim::calib
