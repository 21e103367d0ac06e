// The measurement loop, driven by a fake timer: call order, warm-up length, stop rule.
#include "calibrate/core/measure.hpp"

#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace hopsim::calib {
namespace {

/// Records every call; each start→stop interval lasts the next value of `durations_us`.
class FakeTimer final : public TimerBackend {
 public:
  explicit FakeTimer(std::vector<double> durations_us) : durations_(std::move(durations_us)) {}

  void flush() override { calls.emplace_back("flush"); }

  void start() override { calls.emplace_back("start"); }

  void stop() override { calls.emplace_back("stop"); }

  double elapsed_us() override {
    calls.emplace_back("elapsed");
    const double d = durations_[std::min(next_, durations_.size() - 1)];
    ++next_;
    return d;
  }

  std::vector<std::string> calls;

 private:
  std::vector<double> durations_;
  std::size_t next_ = 0;
};

}  // namespace

TEST_CASE("every timed rep is flush → start → op → stop, warm-up has no flush") {
  FakeTimer timer({1000.0});  // 1 ms per rep
  MeasureConfig config;
  config.warmup_reps = 3;
  config.warmup_ms = 5.0;
  config.stop.min_samples = 10;
  const Measurement m = measure(
      timer, [&] { timer.calls.emplace_back("op"); }, config);
  CHECK(m.warmup_reps == 5);  // 5 ms of warm-up at 1 ms per rep
  CHECK(m.samples_us.size() == 10);
  const std::vector<std::string> warm{"start", "op", "stop", "elapsed"};
  const std::vector<std::string> timed{"flush", "start", "op", "stop", "elapsed"};
  std::size_t i = 0;
  for (std::size_t w = 0; w < m.warmup_reps; ++w) {
    for (const std::string& c : warm) {
      REQUIRE(timer.calls.at(i++) == c);
    }
  }
  for (std::size_t r = 0; r < m.samples_us.size(); ++r) {
    for (const std::string& c : timed) {
      REQUIRE(timer.calls.at(i++) == c);
    }
  }
  CHECK(i == timer.calls.size());
  CHECK(m.summary.median_us == 1000.0);
}

TEST_CASE("warm-up needs at least warmup_reps even when reps are long") {
  FakeTimer timer({50000.0});
  MeasureConfig config;
  config.warmup_reps = 3;
  config.warmup_ms = 25.0;
  const Measurement m = measure(
      timer, [] {}, config);
  CHECK(m.warmup_reps == 3);
}

TEST_CASE("noisy samples run until the sample cap") {
  std::vector<double> durations(3, 10.0);  // warm-up
  for (int i = 0; i < 100; ++i) {
    durations.push_back(i % 2 == 0 ? 10.0 : 20.0);
  }
  FakeTimer timer(durations);
  MeasureConfig config;
  config.warmup_reps = 3;
  config.warmup_ms = 0.0;
  config.stop.max_samples = 40;
  const Measurement m = measure(
      timer, [] {}, config);
  CHECK(m.samples_us.size() == 40);
  CHECK(m.summary.p10_us == 10.0);
  CHECK(m.summary.p90_us == 20.0);
}

}  // namespace hopsim::calib
