// The per-thread arithmetic of the memory-bound kernels that is more than a formula, written once
// for the device and the host: the online softmax's running (max, sum) and its merge (cross-
// entropy), the router's top-k candidates and their order, the rotary frequency of a column, and
// the FP8 cast's tile layout. The kernels call these; tests/kernel_math_test.cpp runs them on the
// CPU against plain references (a warp's shuffles emulated lane by lane).
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define HOPSIM_HD __host__ __device__
#else
#define HOPSIM_HD
#endif

namespace hopsim::calib {

HOPSIM_HD inline float exp_f(float v) {
#ifdef __CUDA_ARCH__
  return __expf(v);
#else
  return std::exp(v);
#endif
}

/// A running softmax denominator: the maximum seen and the sum of exp(v - max), as Liger's and
/// Apex's cross-entropy kernels keep it (one pass instead of a max pass and a sum pass).
struct OnlineMax {
  float max = -INFINITY;
  float sum = 0.0f;

  HOPSIM_HD void push(float v) {
    if (v > max) {
      sum = sum * exp_f(max - v) + 1.0f;
      max = v;
    } else {
      sum += exp_f(v - max);
    }
  }

  /// The sum rescaled to another maximum `m` (>= max).
  HOPSIM_HD float sum_at(float m) const { return sum > 0.0f ? sum * exp_f(max - m) : 0.0f; }

  HOPSIM_HD void merge(const OnlineMax& o) {
    const float m = o.max > max ? o.max : max;
    sum = sum_at(m) + o.sum_at(m);
    max = m;
  }
};

/// A top-k candidate: a router probability and its expert id.
struct TopCandidate {
  float value = -1.0f;
  int id = 0x7fffffff;
};

/// The better of two candidates: the larger value, ties to the lower id (the order the check
/// and torch.topk's stable sort give).
HOPSIM_HD inline TopCandidate better(TopCandidate a, TopCandidate b) {
  return (b.value > a.value || (b.value == a.value && b.id < a.id)) ? b : a;
}

/// Router: a lane holds kRouterPerLane consecutive experts (two 128-bit loads of FP32).
inline constexpr int kRouterPerLane = 8;

/// The best of a lane's experts `first` .. `first` + 7 not yet taken (bit j of `taken` is expert
/// first + j); value -1 when all are.
HOPSIM_HD inline TopCandidate lane_best(const float (&p)[kRouterPerLane], int first,
                                        unsigned taken) {
  TopCandidate best;
  for (int j = 0; j < kRouterPerLane; ++j) {
    if ((taken & (1U << j)) == 0U) {
      best = better(best, TopCandidate{p[j], first + j});
    }
  }
  return best;
}

/// Rotary: the frequency index j (angle = row x 10000^(-2j/64)) of column `col` of a row of
/// 64-dim heads whose pairs are (2j, 2j+1).
inline constexpr int kRotaryDims = 64;

HOPSIM_HD inline int rotary_freq(int col) {
  return (col % kRotaryDims) / 2;
}

/// FP8 cast with transpose: a tile of kCastTileRows rows x one scale group of kCastGroup columns
/// per block of kCastThreads threads. The read: 8-column chunks, chunk c of the tile at row c / 16,
/// column 8 (c % 16) (a half-warp per row, so a row's amax is a 16-lane shuffle). The transposed
/// write: 16-row chunks, chunk c at column c / 4, rows 16 (c % 4) .. + 15 (one 128-bit store of
/// FP8 into q^T).
inline constexpr int kCastGroup = 128;
inline constexpr int kCastTileRows = 64;
inline constexpr int kCastThreads = 256;
inline constexpr int kCastReadChunks = kCastTileRows * kCastGroup / 8;    // 1024
inline constexpr int kCastWriteChunks = kCastTileRows * kCastGroup / 16;  // 512

struct TileCell {
  int row = 0;
  int col = 0;
};

HOPSIM_HD inline TileCell cast_read_chunk(int c) {
  return {c / (kCastGroup / 8), 8 * (c % (kCastGroup / 8))};
}

HOPSIM_HD inline TileCell cast_write_chunk(int c) {
  return {16 * (c % (kCastTileRows / 16)), c / (kCastTileRows / 16)};
}

}  // namespace hopsim::calib
