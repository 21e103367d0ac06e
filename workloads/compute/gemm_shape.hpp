// GEMM efficiency by shape, for the roofline where no calibration table answers.
//
// Wave quantization (NVIDIA, "Matrix Multiplication Background User's Guide", Deep Learning
// Performance documentation): a GEMM's m x n output is cut into thread-block tiles, and the
// tiles run in waves of one per SM; a last wave that is partly empty idles the rest. So
//   efficiency(m, n) = e_sat * tiles / (ceil(tiles / SMs) * SMs),
//   tiles = ceil(m / 128) * ceil(n / 128)          (a grouped GEMM: experts times that),
// with e_sat the efficiency of a GPU kept busy. The roofline's memory term (bytes over HBM
// bandwidth, compute_model.hpp) bounds thin GEMMs the same way as before; the two together are
// t = launch + max(F / (P * efficiency), B / HBM).
//
// One constant per family of kernels, fitted on one published case each (H100 SXM; all in
// configs/calibration/h100-published.json): e_sat = rate / peak / the case's own waves.
//   BF16          cuBLAS 8192^3 at 798 of 989.4 TFLOP/s: 4,096 tiles, 31 full waves of 132
//                 SMs and a 32nd nearly empty (4096 / 4224): e_sat = 0.832
//   FP8           DeepGEMM 4096 x 7168 x 16384 at 1,520 of 1,978.9: 1,792 tiles: 0.792
//   FP8 grouped   DeepGEMM contiguous, 8 experts x 4096 rows, n 4096, k 7168, at 1,346:
//                 8,192 tiles: 0.690
// FP8 reaches a lower share of its peak than BF16, and its grouped kernels lower still: one
// constant for all would price FP8 GEMMs just below a table's grid faster than the grid's own
// edge. BF16 grouped GEMMs have no published H100 case and take the BF16 constant. The H200 and
// H800 have the H100's SMs and clocks and take these too. A cluster's gpu.gemm_efficiency
// scales the curves by its ratio to kGemmReference (0.7, the default), as
// gpu.attention_efficiency does attention's.
#pragma once

#include <cstdint>

namespace hopsim::work {

/// gpu.gemm_efficiency at which the curve gives the published H100 SXM rates unscaled.
inline constexpr double kGemmReference = 0.7;

/// The SMs of the GPU every fitted case ran on (H100 SXM, or H800: the same SMs and clocks). A
/// cluster whose GPU has other SMs must state its gpu.*_efficiency keys (cluster_config.cpp):
/// the defaults are this GPU's.
inline constexpr std::int64_t kFittedSms = 132;

/// The kernel families with a fitted constant each, in the order of their cases.
enum class GemmFamily { Bf16, Fp8, Fp8Grouped };
/// A GEMM's family: BF16 (dense or grouped), FP8 dense, FP8 grouped.
GemmFamily gemm_family_of(bool fp8, bool grouped);

/// e_sat: the family's published rate over the H100's dense peak, its waves taken out.
double gemm_saturated_efficiency(GemmFamily family);

/// The share of SM time `tiles` output tiles keep busy in whole waves of `sms` SMs.
double gemm_tile_waves(std::int64_t tiles, std::int64_t sms);

/// Output tiles of `groups` GEMMs of m x n each (128 x 128 tiles).
std::int64_t gemm_tiles(std::int64_t groups, std::int64_t m, std::int64_t n);

/// Achieved over the dense peak for `groups` GEMMs of an m x n output of `family`, on a GPU of
/// `sm_count` SMs whose gpu.gemm_efficiency is `scale`. In (0, 1].
double gemm_shape_efficiency(GemmFamily family, std::int64_t groups, std::int64_t m,
                             std::int64_t n, double scale, std::int64_t sm_count);

}  // namespace hopsim::work
