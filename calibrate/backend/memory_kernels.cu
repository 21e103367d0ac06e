// The memory-bound kernels (memory_kernels.hpp): straightforward one-pass kernels, each reading
// and writing its bytes once, FP32 arithmetic.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "calibrate/backend/cuda_check.hpp"
#include "calibrate/backend/memory_kernels.hpp"

namespace hopsim::calib {
namespace {

using bf16 = __nv_bfloat16;
using fp8 = __nv_fp8_e4m3;

constexpr int kThreads = 256;
constexpr int kTopK = 8;
constexpr int kRotaryDims = 64;
constexpr int kHeadDim = 128;
constexpr int kCastGroup = 128;

__device__ float to_f(bf16 v) { return __bfloat162float(v); }
__device__ bf16 to_b(float v) { return __float2bfloat16_rn(v); }

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

__device__ float block_sum(float v) { return block_reduce(v, Add{}); }
__device__ float block_max(float v) { return block_reduce(v, Max{}); }

// One block per row.
__global__ void norm_fwd(const bf16* x, const bf16* weight, bf16* y, float* rstd, int w) {
  const long long row = blockIdx.x;
  const bf16* xr = x + row * w;
  float ss = 0;
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    const float v = to_f(xr[i]);
    ss += v * v;
  }
  const float r = rsqrtf(block_sum(ss) / static_cast<float>(w) + 1e-6f);
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    y[row * w + i] = to_b(to_f(xr[i]) * r * to_f(weight[i]));
  }
  if (threadIdx.x == 0) {
    rstd[row] = r;
  }
}

// dx = r (g - x r^2 mean(g x)), g = dy * weight.
__global__ void norm_bwd(const bf16* x, const bf16* dy, const bf16* weight, const float* rstd,
                         bf16* dx, int w) {
  const long long row = blockIdx.x;
  const float r = rstd[row];
  float dot = 0;
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    dot += to_f(dy[row * w + i]) * to_f(weight[i]) * to_f(x[row * w + i]);
  }
  const float mean = block_sum(dot) / static_cast<float>(w);
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    const float g = to_f(dy[row * w + i]) * to_f(weight[i]);
    dx[row * w + i] = to_b(r * (g - to_f(x[row * w + i]) * r * r * mean));
  }
}

__global__ void residual(const bf16* a, const bf16* b, bf16* c, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    c[i] = to_b(to_f(a[i]) + to_f(b[i]));
  }
}

// Pairs (2j, 2j+1) of each head's 64 rotated dims, angle row * 10000^(-2j/64); bwd rotates back.
__global__ void rotary(const bf16* x, bf16* y, int w, float sign) {
  const long long row = blockIdx.x;
  for (int p = threadIdx.x; p < w / 2; p += blockDim.x) {
    const int j = p % (kRotaryDims / 2);
    const float angle =
        sign * static_cast<float>(row) * powf(10000.0f, -2.0f * j / kRotaryDims);
    float s;
    float c;
    sincosf(angle, &s, &c);
    const float a = to_f(x[row * w + 2 * p]);
    const float b = to_f(x[row * w + 2 * p + 1]);
    y[row * w + 2 * p] = to_b(a * c - b * s);
    y[row * w + 2 * p + 1] = to_b(a * s + b * c);
  }
}

__device__ float sigmoid(float v) { return 1.0f / (1.0f + __expf(-v)); }

__global__ void swiglu_fwd(const bf16* gu, bf16* y, int w) {
  const long long row = blockIdx.x;
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    const float g = to_f(gu[row * 2 * w + i]);
    const float u = to_f(gu[row * 2 * w + w + i]);
    y[row * w + i] = to_b(g * sigmoid(g) * u);
  }
}

__global__ void swiglu_bwd(const bf16* gu, const bf16* dy, bf16* dgu, int w) {
  const long long row = blockIdx.x;
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    const float g = to_f(gu[row * 2 * w + i]);
    const float u = to_f(gu[row * 2 * w + w + i]);
    const float d = to_f(dy[row * w + i]);
    const float s = sigmoid(g);
    dgu[row * 2 * w + i] = to_b(d * u * s * (1.0f + g * (1.0f - s)));
    dgu[row * 2 * w + w + i] = to_b(d * g * s);
  }
}

// A tile of 32 rows x 128 columns per block (128 threads): per row and group of 128 a scale of
// amax / 448, the row-major FP8 copy and the transposed one.
__global__ void fp8_cast(const bf16* x, fp8* q, fp8* qt, float* scales, long long rows, int w) {
  __shared__ float tile[32][kCastGroup + 1];
  __shared__ float scale[32];
  const long long row0 = static_cast<long long>(blockIdx.y) * 32;
  const int col0 = blockIdx.x * kCastGroup;
  const int c = threadIdx.x;
  for (int r = 0; r < 32; ++r) {
    const long long row = row0 + r;
    tile[r][c] = row < rows ? to_f(x[row * w + col0 + c]) : 0.0f;
  }
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  for (int r = warp; r < 32; r += 4) {
    float m = 0;
    for (int i = lane; i < kCastGroup; i += 32) {
      m = fmaxf(m, fabsf(tile[r][i]));
    }
    for (int o = 16; o > 0; o >>= 1) {
      m = fmaxf(m, __shfl_xor_sync(0xffffffffU, m, o));
    }
    if (lane == 0) {
      scale[r] = m > 0 ? m / 448.0f : 1.0f;
      if (row0 + r < rows) {
        scales[(row0 + r) * (w / kCastGroup) + blockIdx.x] = scale[r];
      }
    }
  }
  __syncthreads();
  for (int r = 0; r < 32; ++r) {
    const long long row = row0 + r;
    if (row < rows) {
      const fp8 v(tile[r][c] / scale[r]);
      q[row * w + col0 + c] = v;
      qt[static_cast<long long>(col0 + c) * rows + row] = v;
    }
  }
}

// One block of 256 threads per row of w <= 256 FP32 logits: softmax, then the top 8 by repeated
// arg-max.
__global__ void router_fwd(const float* logits, float* probs, int* ids, float* weights, int w) {
  const long long row = blockIdx.x;
  const int i = threadIdx.x;
  const float v = i < w ? logits[row * w + i] : -INFINITY;
  const float m = block_max(v);
  const float e = i < w ? __expf(v - m) : 0.0f;
  const float p = e / block_sum(e);
  if (i < w) {
    probs[row * w + i] = p;
  }
  __shared__ float best[kThreads];
  __shared__ int arg[kThreads];
  float mine = i < w ? p : -1.0f;
  for (int k = 0; k < kTopK; ++k) {
    best[i] = mine;
    arg[i] = i;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (i < s && (best[i + s] > best[i] || (best[i + s] == best[i] && arg[i + s] < arg[i]))) {
        best[i] = best[i + s];
        arg[i] = arg[i + s];
      }
      __syncthreads();
    }
    if (i == 0) {
      ids[row * kTopK + k] = arg[0];
      weights[row * kTopK + k] = best[0];
    }
    if (i == arg[0]) {
      mine = -1.0f;
    }
    __syncthreads();
  }
}

__global__ void router_bwd(const float* probs, const float* dprobs, float* dlogits, int w) {
  const long long row = blockIdx.x;
  const int i = threadIdx.x;
  const float p = i < w ? probs[row * w + i] : 0.0f;
  const float d = i < w ? dprobs[row * w + i] : 0.0f;
  const float dot = block_sum(p * d);
  if (i < w) {
    dlogits[row * w + i] = p * (d - dot);
  }
}

// Row `row` of the output is row ids[row] of the input, copied 16 bytes at a time.
__global__ void gather_rows(const uint4* in, const int* ids, uint4* out, int vecs_per_row) {
  const long long row = blockIdx.x;
  const long long src = ids[row];
  for (int i = threadIdx.x; i < vecs_per_row; i += blockDim.x) {
    out[row * vecs_per_row + i] = in[src * vecs_per_row + i];
  }
}

// One warp per (token, head): delta = sum_d O dO over 128 dims; dQ from FP32 to BF16.
__global__ void attn_bwd_prep(const bf16* o, const bf16* d_o, const float* dq_acc, float* delta,
                              bf16* dq, long long pairs) {
  const long long pair = blockIdx.x * static_cast<long long>(blockDim.x / 32) + threadIdx.x / 32;
  if (pair >= pairs) {
    return;
  }
  const int lane = threadIdx.x % 32;
  const long long base = pair * kHeadDim;
  float sum = 0;
  for (int d = lane; d < kHeadDim; d += 32) {
    sum += to_f(o[base + d]) * to_f(d_o[base + d]);
    dq[base + d] = to_b(dq_acc[base + d]);
  }
  for (int off = 16; off > 0; off >>= 1) {
    sum += __shfl_xor_sync(0xffffffffU, sum, off);
  }
  if (lane == 0) {
    delta[pair] = sum;
  }
}

// One block per row of w BF16 logits: the row's maximum and sum of exponentials in one online
// pass, the loss log(sum) + max - x[target], then, reading the row again, the gradient
// softmax - onehot(target) in BF16 (a fused, online-softmax cross-entropy).
__global__ void cross_entropy_fwd(const bf16* logits, const int* targets, bf16* grad, float* loss,
                                  int w) {
  const long long row = blockIdx.x;
  const bf16* x = logits + row * w;
  float m = -INFINITY;
  float s = 0;
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    const float v = to_f(x[i]);
    if (v > m) {
      s = s * __expf(m - v) + 1.0f;
      m = v;
    } else {
      s += __expf(v - m);
    }
  }
  const float row_max = block_max(m);
  const float sum = block_sum(s > 0 ? s * __expf(m - row_max) : 0.0f);
  const int t = targets[row];
  if (threadIdx.x == 0) {
    loss[row] = logf(sum) + row_max - to_f(x[t]);
  }
  const float inv = 1.0f / sum;
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    const float p = __expf(to_f(x[i]) - row_max) * inv;
    grad[row * w + i] = to_b(i == t ? p - 1.0f : p);
  }
}

// The saved gradient times the loss's, row by row.
__global__ void cross_entropy_bwd(const bf16* grad, const float* dloss, bf16* dlogits, int w) {
  const long long row = blockIdx.x;
  const float d = dloss[row];
  for (int i = threadIdx.x; i < w; i += blockDim.x) {
    dlogits[row * w + i] = to_b(to_f(grad[row * w + i]) * d);
  }
}

template <typename T>
const T* in_as(const MemoryLaunch& l, int i) {
  return static_cast<const T*>(l.in[static_cast<std::size_t>(i)]);
}

template <typename T>
T* out_as(const MemoryLaunch& l, int i) {
  return static_cast<T*>(l.out[static_cast<std::size_t>(i)]);
}

}  // namespace

void launch_memory_kernel(const MemoryLaunch& l, cudaStream_t stream) {
  const auto rows = static_cast<unsigned>(l.rows);
  const int w = static_cast<int>(l.width);
  const bool fwd = l.pass == Pass::Fwd;
  switch (l.kernel) {
    case MemoryKernel::Norm:
      if (fwd) {
        norm_fwd<<<rows, kThreads, 0, stream>>>(in_as<bf16>(l, 0), in_as<bf16>(l, 1),
                                                out_as<bf16>(l, 0), out_as<float>(l, 1), w);
      } else {
        norm_bwd<<<rows, kThreads, 0, stream>>>(in_as<bf16>(l, 0), in_as<bf16>(l, 1),
                                                in_as<bf16>(l, 2), in_as<float>(l, 3),
                                                out_as<bf16>(l, 0), w);
      }
      break;
    case MemoryKernel::Residual: {
      const long long n = l.rows * l.width;
      const long long blocks = (n + kThreads - 1) / kThreads;
      residual<<<static_cast<unsigned>(blocks < 65535LL * 16 ? blocks : 65535LL * 16), kThreads,
                 0, stream>>>(in_as<bf16>(l, 0), in_as<bf16>(l, 1), out_as<bf16>(l, 0), n);
      break;
    }
    case MemoryKernel::Rotary:
      rotary<<<rows, kThreads, 0, stream>>>(in_as<bf16>(l, 0), out_as<bf16>(l, 0), w,
                                            fwd ? 1.0f : -1.0f);
      break;
    case MemoryKernel::SwiGlu:
      if (fwd) {
        swiglu_fwd<<<rows, kThreads, 0, stream>>>(in_as<bf16>(l, 0), out_as<bf16>(l, 0), w);
      } else {
        swiglu_bwd<<<rows, kThreads, 0, stream>>>(in_as<bf16>(l, 0), in_as<bf16>(l, 1),
                                                  out_as<bf16>(l, 0), w);
      }
      break;
    case MemoryKernel::Fp8Cast: {
      const dim3 grid(static_cast<unsigned>(w / kCastGroup), (rows + 31) / 32);
      fp8_cast<<<grid, kCastGroup, 0, stream>>>(in_as<bf16>(l, 0), out_as<fp8>(l, 0),
                                                out_as<fp8>(l, 1), out_as<float>(l, 2), l.rows,
                                                w);
      break;
    }
    case MemoryKernel::Router:
      if (fwd) {
        router_fwd<<<rows, kThreads, 0, stream>>>(in_as<float>(l, 0), out_as<float>(l, 0),
                                                  out_as<int>(l, 1), out_as<float>(l, 2), w);
      } else {
        router_bwd<<<rows, kThreads, 0, stream>>>(in_as<float>(l, 0), in_as<float>(l, 1),
                                                  out_as<float>(l, 0), w);
      }
      break;
    case MemoryKernel::Permute: {
      const int row_bytes = w * (fwd ? 1 : 2);
      gather_rows<<<rows, kThreads, 0, stream>>>(in_as<uint4>(l, 0), in_as<int>(l, 1),
                                                 out_as<uint4>(l, 0), row_bytes / 16);
      break;
    }
    case MemoryKernel::AttnBwdPrep: {
      const long long pairs = l.rows * l.width;
      const long long blocks = (pairs + kThreads / 32 - 1) / (kThreads / 32);
      attn_bwd_prep<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
          in_as<bf16>(l, 0), in_as<bf16>(l, 1), in_as<float>(l, 2), out_as<float>(l, 0),
          out_as<bf16>(l, 1), pairs);
      break;
    }
    case MemoryKernel::CrossEntropy:
      if (fwd) {
        cross_entropy_fwd<<<rows, kThreads, 0, stream>>>(in_as<bf16>(l, 0), in_as<int>(l, 1),
                                                         out_as<bf16>(l, 0),
                                                         out_as<float>(l, 1), w);
      } else {
        cross_entropy_bwd<<<rows, kThreads, 0, stream>>>(in_as<bf16>(l, 0), in_as<float>(l, 1),
                                                         out_as<bf16>(l, 0), w);
      }
      break;
  }
  HOPSIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace hopsim::calib
