// Clocks during the grid (core/clocks.hpp) with a fake sampler: a point whose SM clock fell more
// than 3% below the run's start is re-measured once, and flagged when it stays down; the table
// keeps min/median clocks and the run writes every point's.
#include "calibrate/core/clocks.hpp"

#include <deque>
#include <utility>

#include <doctest/doctest.h>

namespace hopsim::calib {
namespace {

class FakeSampler : public ClockSampler {
 public:
  explicit FakeSampler(std::deque<double> sm) : sm_(std::move(sm)) {}
  std::optional<ClockSample> sample() override {
    if (sm_.empty()) {
      return std::nullopt;
    }
    const double sm = sm_.front();
    sm_.pop_front();
    return ClockSample{sm, 2619, 60 + sm / 1000, sm / 3};
  }

 private:
  std::deque<double> sm_;
};

}  // namespace

TEST_CASE("clocks: a point more than 3% below the start is re-measured once") {
  // start 1980; p1 1960 (-1%); p2 1900 (-4%) then 1975; p3 1800 then 1810: flagged.
  FakeSampler fake({1980, 1960, 1900, 1975, 1800, 1810});
  ClockLog clocks(&fake);
  clocks.start();
  int runs = 0;
  const auto measure = [&] { ++runs; };
  const PointClocks p1 = clocks.around("p1", measure);
  CHECK(runs == 1);
  CHECK_FALSE(p1.remeasured);
  const PointClocks p2 = clocks.around("p2", measure);
  CHECK(runs == 3);
  CHECK(p2.remeasured);
  CHECK_FALSE(p2.throttled);
  CHECK(p2.sample->sm_mhz == 1975);
  const PointClocks p3 = clocks.around("p3", measure);
  CHECK(runs == 5);  // once more only, however low it stays
  CHECK(p3.remeasured);
  CHECK(p3.throttled);
  CHECK(clocks.dropped(ClockSample{1920, 0, 0, 0}));  // 3.03% below
  CHECK_FALSE(clocks.dropped(ClockSample{1921, 0, 0, 0}));

  const nlohmann::json mhz = clocks.clocks_mhz();
  CHECK(mhz["sm_start"] == 1980.0);
  CHECK(mhz["sm_min"] == 1810.0);
  CHECK(mhz["sm_median"] == 1960.0);  // of 1960, 1975, 1810
  CHECK(mhz["mem_median"] == 2619.0);
  const nlohmann::json method = clocks.method_fields();
  CHECK(method["clock_source"] == "nvml_per_point");
  CHECK(method["points_remeasured"] == 2);
  CHECK(method["points_throttled"] == 1);
  CHECK(method["temp_c_max"].get<double>() > 61.9);
  const std::string csv = clocks.csv();
  CHECK(csv.find("\"p3\",1810,2619,") != std::string::npos);
  CHECK(csv.find(",1,1\n") != std::string::npos);
}

TEST_CASE("clocks: without a sampler nothing is sampled or re-measured") {
  ClockLog clocks(nullptr);
  clocks.start();
  int runs = 0;
  const PointClocks p = clocks.around("p", [&] { ++runs; });
  CHECK(runs == 1);
  CHECK_FALSE(p.sample);
  CHECK(clocks.clocks_mhz().is_null());
  CHECK(clocks.method_fields()["clock_source"] == "none");
}

TEST_CASE("clocks: NVML loads or says why not, never crashes") {
  std::string why;
  const auto sampler = make_nvml_sampler(why);
  if (sampler) {
    CHECK(sampler->sample().has_value());
  } else {
    CHECK_FALSE(why.empty());
  }
  CHECK(median_of({3, 1, 2}) == 2);
  CHECK(median_of({4, 1, 2, 3}) == 2.5);
  CHECK(median_of({}) == 0);
}

}  // namespace hopsim::calib
