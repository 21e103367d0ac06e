// GEMM efficiency by shape: the fitted constant in closed form, wave quantization, the scale,
// and the roofline that uses it.
#include "workloads/compute/gemm_shape.hpp"

#include <cmath>
#include <cstdint>

#include "doctest_time.hpp"
#include "tests/approx.hpp"
#include "workloads/compute/compute_model.hpp"

using hopsim::Time;
using namespace hopsim::work;

namespace {

Roofline h100() {
  Roofline r;
  r.peak_bf16_tflops = 989.4;
  r.peak_fp8_tflops = 1978.9;
  r.hbm_GBps = 3350;
  return r;
}

}  // namespace

TEST_CASE("e_sat is cuBLAS's published 8192^3 rate with its waves taken out") {
  // 64 x 64 = 4096 tiles on 132 SMs: 31 full waves and a 32nd of 4 tiles, 4096 / 4224.
  CHECK(gemm_tiles(1, 8192, 8192) == 4096);
  CHECK(gemm_tile_waves(4096, 132) == hopsim::test::approx(4096.0 / 4224));
  const double bf16 = gemm_saturated_efficiency(GemmFamily::Bf16);
  CHECK(bf16 == hopsim::test::approx(798 / 989.4 * 4224 / 4096));
  CHECK(bf16 == hopsim::test::approx(0.832).epsilon(0.001));
  // At the reference scale each fitted shape gives back its published rate: DeepGEMM's FP8
  // 1,520 TF at 4096 x 7168 (32 x 56 tiles), its grouped 1,346 at 8 x 4096 x 4096.
  CHECK(gemm_shape_efficiency(GemmFamily::Bf16, 1, 8192, 8192, kGemmReference, 132) * 989.4 ==
        hopsim::test::approx(798));
  CHECK(gemm_shape_efficiency(GemmFamily::Fp8, 1, 4096, 7168, kGemmReference, 132) * 1978.9 ==
        hopsim::test::approx(1520));
  CHECK(gemm_shape_efficiency(GemmFamily::Fp8Grouped, 8, 4096, 4096, kGemmReference, 132) *
            1978.9 ==
        hopsim::test::approx(1346));
  CHECK(gemm_saturated_efficiency(GemmFamily::Fp8) == hopsim::test::approx(0.792).epsilon(0.001));
  CHECK(gemm_saturated_efficiency(GemmFamily::Fp8Grouped) ==
        hopsim::test::approx(0.690).epsilon(0.001));
  CHECK(gemm_family_of(false, true) == GemmFamily::Bf16);
  CHECK(gemm_family_of(true, true) == GemmFamily::Fp8Grouped);
}

TEST_CASE("thin and small GEMMs fill fewer SMs, in whole waves") {
  // m = 128 tokens against a 4096-wide weight: 32 tiles on 132 SMs.
  const double bf16 = gemm_saturated_efficiency(GemmFamily::Bf16);
  CHECK(gemm_shape_efficiency(GemmFamily::Bf16, 1, 128, 4096, kGemmReference, 132) ==
        hopsim::test::approx(bf16 * 32 / 132));
  // A partial tile counts whole: 129 rows are two tile rows.
  CHECK(gemm_tiles(1, 129, 128) == 2);
  // 132 tiles fill one wave exactly; 133 start a second wave of one tile.
  CHECK(gemm_tile_waves(132, 132) == 1.0);
  CHECK(gemm_tile_waves(133, 132) == hopsim::test::approx(133.0 / 264));
  // Grouped: experts multiply the tiles (8 experts x 128 x 2048: 8 x 16 tiles, one wave).
  CHECK(gemm_tiles(8, 128, 2048) == 128);
  // gpu.gemm_efficiency scales the curve by its ratio to 0.7, never past 1.
  CHECK(gemm_shape_efficiency(GemmFamily::Bf16, 1, 4096, 4096, 0.35, 132) ==
        hopsim::test::approx(gemm_shape_efficiency(GemmFamily::Bf16, 1, 4096, 4096, 0.7, 132) /
                             2));
  CHECK(gemm_shape_efficiency(GemmFamily::Bf16, 1, 4096, 4096, 1.0, 132) == 1.0);
}

TEST_CASE("the roofline prices a GEMM at its shape's efficiency, its bytes bounding thin ones") {
  const ComputeModel bare(nullptr, h100());
  // 8192^3: 798 TF plus the 4 us launch.
  const ComputeCost big = bare.gemm(Dtype::Bf16, 8192, 8192, 8192, GemmRole::Fprop);
  CHECK(big.time.seconds() == hopsim::test::approx(4e-6 + 2.0 * 8192 * 8192 * 8192 / 798e12));
  // 256 x 8192 x 8192: 128 tiles, under one wave; compute-bound still (F / (P e) > B / HBM).
  const double f = 2.0 * 256 * 8192 * 8192;
  const double eff = gemm_saturated_efficiency(GemmFamily::Bf16) * 128 / 132;
  const double bytes = 2.0 * (256 * 8192 + 8192 * 8192 + 256 * 8192);
  REQUIRE(f / (989.4e12 * eff) > bytes / 3350e9);
  CHECK(bare.gemm(Dtype::Bf16, 256, 8192, 8192, GemmRole::Fprop).time.seconds() ==
        hopsim::test::approx(4e-6 + f / (989.4e12 * eff)));
  // Its dgrad (256, 8192, 8192) is the same shape; its wgrad (8192, 8192) over 256 tokens fills
  // 4096 tiles: a higher efficiency, but bound by the FP32 gradient's bytes.
  const ComputeCost wgrad = bare.gemm(Dtype::Bf16, 256, 8192, 8192, GemmRole::Wgrad);
  const double wbytes = 2.0 * (8192 * 256 + 256 * 8192 + 8192 * 8192) + 6.0 * 8192 * 8192;
  CHECK(wgrad.time.seconds() == hopsim::test::approx(4e-6 + wbytes / 3350e9));
}
