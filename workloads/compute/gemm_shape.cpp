// GEMM efficiency by shape: wave quantization of output tiles (gemm_shape.hpp).
#include "workloads/compute/gemm_shape.hpp"

#include <algorithm>
#include <array>

#include "sim/assert.hpp"

namespace hopsim::work {
namespace {

constexpr std::int64_t kTile = 128;

// The fitted cases, one per family, all on H100 SXM (or H800, the same SMs and clocks), all in
// configs/calibration/h100-published.json: TFLOP/s of the dense peak, at groups x m x n tiles.
struct FittedCase {
  GemmFamily family;
  double tflops, peak_tflops;
  std::int64_t groups, m, n;
};
constexpr std::array<FittedCase, 3> kCases{{
    // cuBLAS BF16 8192^3 (torch.matmul benchmark reports).
    {GemmFamily::Bf16, 798, 989.4, 1, 8192, 8192},
    // DeepGEMM FP8, m 4096 x n 7168 x k 16384 (its README, commit 327ec92).
    {GemmFamily::Fp8, 1520, 1978.9, 1, 4096, 7168},
    // DeepGEMM FP8 contiguous grouped, 8 experts x 4096 rows, n 4096, k 7168 (the same README).
    {GemmFamily::Fp8Grouped, 1346, 1978.9, 8, 4096, 4096},
}};

std::int64_t tiles_along(std::int64_t extent) { return (extent + kTile - 1) / kTile; }

}  // namespace

double gemm_tile_waves(std::int64_t tiles, std::int64_t sms) {
  HOPSIM_ASSERT(tiles >= 1 && sms >= 1, "{} tiles on {} SMs", tiles, sms);
  const std::int64_t waves = (tiles + sms - 1) / sms;
  return static_cast<double>(tiles) / static_cast<double>(waves * sms);
}

std::int64_t gemm_tiles(std::int64_t groups, std::int64_t m, std::int64_t n) {
  return std::max<std::int64_t>(1, groups) * tiles_along(std::max<std::int64_t>(1, m)) *
         tiles_along(std::max<std::int64_t>(1, n));
}

GemmFamily gemm_family_of(bool fp8, bool grouped) {
  if (!fp8) {
    return GemmFamily::Bf16;  // no published BF16 grouped case: the dense one
  }
  return grouped ? GemmFamily::Fp8Grouped : GemmFamily::Fp8;
}

double gemm_saturated_efficiency(GemmFamily family) {
  const FittedCase& c = kCases[static_cast<std::size_t>(family)];
  const double waves = gemm_tile_waves(gemm_tiles(c.groups, c.m, c.n), kFittedSms);
  return c.tflops / c.peak_tflops / waves;
}

double gemm_shape_efficiency(GemmFamily family, std::int64_t groups, std::int64_t m,
                             std::int64_t n, double scale, std::int64_t sm_count) {
  const double share =
      gemm_saturated_efficiency(family) * gemm_tile_waves(gemm_tiles(groups, m, n), sm_count);
  return std::min(1.0, share * (scale / kGemmReference));
}

}  // namespace hopsim::work
