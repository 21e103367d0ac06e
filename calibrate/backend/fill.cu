// Device-side random fill: N(0, scale²) from a counter-based hash, converted to the stored type.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "calibrate/backend/buffers.hpp"
#include "calibrate/backend/cuda_check.hpp"

namespace hopsim::calib {
namespace {

__device__ unsigned long long mix(unsigned long long x) {
  // splitmix64 finaliser: a well-spread 64-bit hash of (seed, index).
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

__device__ float normal_sample(unsigned long long seed, unsigned long long i) {
  const unsigned long long h = mix(seed ^ mix(i));
  // Two 24-bit uniforms in (0, 1]; Box–Muller.
  const float u1 = (static_cast<float>(h & 0xFFFFFFULL) + 1.0f) / 16777216.0f;
  const float u2 = static_cast<float>((h >> 24) & 0xFFFFFFULL) / 16777216.0f;
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

template <typename T>
__device__ T convert(float v);

template <>
__device__ __nv_bfloat16 convert<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <>
__device__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);  // saturates to ±448
}

template <>
__device__ float convert<float>(float v) {
  return v;
}

template <typename T>
__global__ void fill_kernel(T* out, unsigned long long n, unsigned long long seed, float scale) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += stride) {
    out[i] = convert<T>(scale * normal_sample(seed, i));
  }
}

}  // namespace

void fill_random(void* data, Elem elem, std::size_t count, std::uint64_t seed, float scale,
                 cudaStream_t stream) {
  if (count == 0) {
    return;
  }
  const unsigned threads = 256;
  const unsigned long long want = (count + threads - 1) / threads;
  const unsigned blocks = static_cast<unsigned>(want < 65535ULL * 8 ? want : 65535ULL * 8);
  switch (elem) {
    case Elem::Bf16:
      fill_kernel<<<blocks, threads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, seed,
                                                  scale);
      break;
    case Elem::Fp8E4m3:
      fill_kernel<<<blocks, threads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data), count, seed,
                                                  scale);
      break;
    case Elem::F32:
      fill_kernel<<<blocks, threads, 0, stream>>>(static_cast<float*>(data), count, seed, scale);
      break;
    case Elem::I32:
      throw CalibError("fill_random: int32 ids are not random normals (memory_ids makes them)");
  }
  HOPSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace hopsim::calib
