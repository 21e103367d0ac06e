// Device helpers the memory-bound kernels share (nvcc only, through row_file.hpp): element types,
// conversions and block-wide reductions. The kernels are straightforward: each reads and writes its
// bytes once, in FP32 arithmetic.
#pragma once

#include <cstdint>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

namespace hopsim::calib {

using bf16 = __nv_bfloat16;
using fp8 = __nv_fp8_e4m3;

/// Threads per block of the kernels that take one block per row.
inline constexpr int kThreads = 256;

__device__ inline float to_f(bf16 v) {
  return __bfloat162float(v);
}

__device__ inline bf16 to_b(float v) {
  return __float2bfloat16_rn(v);
}

// `op` over the block (blockDim.x a multiple of 32, at most 1024): warp shuffles, then the
// warps' partials, which every thread reads.
template <typename Op>
__device__ float block_reduce(float v, Op op) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1) {
    v = op(v, __shfl_xor_sync(0xffffffffU, v, o));
  }
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0) {
    part[warp] = v;
  }
  __syncthreads();
  float r = part[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) {
    r = op(r, part[w]);
  }
  return r;
}

struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

__device__ inline float block_sum(float v) {
  return block_reduce(v, Add{});
}

__device__ inline float block_max(float v) {
  return block_reduce(v, Max{});
}

/// One block per row: the grid of a kernel over `rows` rows.
inline unsigned row_blocks(std::int64_t rows) {
  return static_cast<unsigned>(rows);
}

/// Eight BF16 values: one 128-bit load or store (the pointer 16-byte aligned, as cudaMalloc's
/// buffers and rows of a multiple of 8 elements are).
struct alignas(16) Bf16x8 {
  bf16 v[8];
};

__device__ inline Bf16x8 load8(const bf16* p) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  Bf16x8 x;
  static_assert(sizeof x == sizeof raw);
  memcpy(&x, &raw, sizeof x);
  return x;
}

__device__ inline void store8(bf16* p, const Bf16x8& x) {
  uint4 raw;
  memcpy(&raw, &x, sizeof raw);
  *reinterpret_cast<uint4*>(p) = raw;
}

/// body(i) for this thread's items of a grid-stride loop over `items`: i = the thread's global
/// index, then every whole grid further (stride_blocks sizes the grid).
template <typename Body>
__device__ void grid_stride(long long items, Body body) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < items;
       i += stride) {
    body(i);
  }
}

/// Blocks for a grid-stride kernel over `items` work items of one thread each: as many as the
/// GPU keeps resident (SMs × the kernel's occupancy at `threads`), fewer when the work needs
/// fewer. Occupancy is asked once per kernel (host work inside a timed window would count).
/// Resident blocks of `kernel` at `threads` on this GPU (SMs × occupancy), asked once per kernel.
int resident_blocks(const void* kernel, int threads);

template <typename Kernel>
unsigned stride_blocks(Kernel kernel, long long items, int threads) {
  const long long resident = resident_blocks(reinterpret_cast<const void*>(kernel), threads);
  const long long need = (items + threads - 1) / threads;
  return static_cast<unsigned>(need < resident ? (need > 0 ? need : 1) : resident);
}

}  // namespace hopsim::calib
