// Execution on a device: correctness checks against the FP64 references, and one measured
// point per op. Skipped (and reported as skipped) without a CUDA device.
#include <doctest/doctest.h>

#include "calibrate/backend/checks.hpp"
#include "calibrate/backend/suites.hpp"
#include "gpu_skip.hpp"

namespace hopsim::calib {
namespace {

MeasureConfig quick_config() {
  MeasureConfig c;
  c.warmup_ms = 5.0;
  c.stop.min_samples = 5;
  c.stop.max_samples = 20;
  return c;
}

}  // namespace

TEST_CASE("GPU: every correctness check passes" * doctest::skip(test::no_gpu())) {
  HOPSIM_REQUIRE_GPU();
  GpuContext ctx;
  AttnPlanCache cache;
  for (const CheckResult& c : run_checks(ctx, cache, Suite::All)) {
    INFO(c.name << ": " << c.detail);
    CHECK(c.passed);
  }
}

TEST_CASE("GPU: one smoke point of each op measures a positive time" *
          doctest::skip(test::no_gpu())) {
  HOPSIM_REQUIRE_GPU();
  GpuContext ctx;
  CudaTimer timer(ctx.stream());
  SuiteState state;
  const Grid g = make_grid("smoke");
  for (Suite suite : {Suite::Gemm, Suite::Experts, Suite::Attn, Suite::Memory}) {
    const GridPoint p = grid_points(g, suite).front();
    const Measurement m = measure_point(ctx, timer, state, g.tables[p.table], p, quick_config());
    CHECK(m.summary.median_us > 0.0);
    CHECK(m.summary.p10_us <= m.summary.p90_us);
  }
}

TEST_CASE("GPU: ceilings are plausible for a datacenter GPU" * doctest::skip(test::no_gpu())) {
  HOPSIM_REQUIRE_GPU();
  GpuContext ctx;
  CudaTimer timer(ctx.stream());
  const auto c = measure_ceilings(ctx, timer, quick_config());
  CHECK(c.value("copy_GBps", 0.0) > 100.0);
  CHECK(c.value("bf16_gemm_tflops", 0.0) > 10.0);
}

}  // namespace hopsim::calib
