// Warm-up then flush → start → op → stop until the stop rule holds.
#include "calibrate/core/measure.hpp"

namespace hopsim::calib {

TimerBackend::~TimerBackend() = default;

Measurement measure(TimerBackend& timer, const std::function<void()>& op,
                    const MeasureConfig& config) {
  Measurement m;
  double warm_ms = 0.0;
  while (m.warmup_reps < config.max_warmup_reps &&
         (m.warmup_reps < config.warmup_reps || warm_ms < config.warmup_ms)) {
    timer.start();
    op();
    timer.stop();
    warm_ms += timer.elapsed_us() / 1000.0;
    ++m.warmup_reps;
  }
  do {
    timer.flush();
    timer.start();
    op();
    timer.stop();
    m.samples_us.push_back(timer.elapsed_us());
  } while (!should_stop(m.samples_us, config.stop));
  m.summary = summarize(m.samples_us);
  return m;
}

}  // namespace hopsim::calib
