// Dry-run estimates: positive, growing with size, and a smoke grid sized for a short device run.
#include "calibrate/core/plan.hpp"

#include <doctest/doctest.h>

#include "tests/approx.hpp"

namespace hopsim::calib {

TEST_CASE("op estimates grow with work") {
  const EstimateModel model;
  const TableSpec gemm = gemm_spec(Dtype::Bf16, {128, 8192}, {8192}, {8192});
  const double small = estimate_op_us(gemm, {0, 0, {128, 8192, 8192}}, model);
  const double big = estimate_op_us(gemm, {0, 1, {8192, 8192, 8192}}, model);
  CHECK(small > model.launch_us);
  CHECK(big > 10 * small);
  CHECK(big == hopsim::test::approx(5.0 + 1.0995e12 / 650e6).epsilon(0.01));
  const TableSpec fp8 = gemm_spec(Dtype::Fp8, {8192}, {8192}, {8192});
  CHECK(estimate_op_us(fp8, {0, 0, {8192, 8192, 8192}}, model) < big);
}

TEST_CASE("smoke grid fits a few minutes of device time") {
  const Grid g = make_grid("smoke");
  const std::vector<GridPoint> pts = grid_points(g, Suite::All);
  const PlanSummary s = summarize_plan(g, pts, MeasureConfig{}, EstimateModel{}, 0.0);
  CHECK(s.points == 164);
  CHECK(s.points_within_budget == 164);
  CHECK(s.total_s > 60.0);
  CHECK(s.total_s < 240.0);
  const PlanSummary tight = summarize_plan(g, pts, MeasureConfig{}, EstimateModel{}, 60.0);
  CHECK(tight.points_within_budget < 164);
}

TEST_CASE("plan text names every table and the total") {
  const Grid g = make_grid("smoke");
  const std::string text = format_plan(g, shard_points(grid_points(g, Suite::All), Shard{1, 2}),
                                       MeasureConfig{}, EstimateModel{}, 300.0, "1/2");
  CHECK(text.find("grid smoke shard 1/2: 33 tables, 82 points") == 0);
  CHECK(text.find("role=wgrad") != std::string::npos);
  CHECK(text.find("kernel=fp8_cast") != std::string::npos);
  CHECK(text.find("cudnn_composite") != std::string::npos);
  CHECK(text.find("estimated device time:") != std::string::npos);
  CHECK(text.find("budget 300 s") != std::string::npos);
}

}  // namespace hopsim::calib
