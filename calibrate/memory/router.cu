// router: the MoE router over DeepSeek-V3's 256 experts, FP32 scores: a softmax and the top 8.
//   fwd  in logits[r w]              out probs[r w], top-8 ids[r 8] (int32), weights[r 8]
//                                                                           8w + 64 a row
//   bwd  in probs[r w], dprobs[r w]  out dlogits[r w]                       12w a row
// One warp per token, 8 experts a lane, so w is at most 256, a multiple of 8.
#include <algorithm>
#include <cmath>

#include "calibrate/memory/kernel_math.hpp"
#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

constexpr int kTopK = 8;
constexpr int kMaxExperts = 256;

#ifdef __CUDACC__
// One warp per token, grid-stride over tokens: lane l holds experts 8l .. 8l+7 in registers (two
// 128-bit loads), the softmax's max and sum are warp shuffles, and the top 8 are 8 rounds of a
// shuffle arg-max over the lanes' best untaken experts (ties to the lower id); lane k keeps the
// k-th. probs are written with 128-bit stores, the ids and weights by lanes 0-7.
constexpr int kRouterThreads = 256;
constexpr int kWarps = kRouterThreads / 32;

__device__ float warp_reduce(float v, bool max) {
  for (int o = 16; o > 0; o >>= 1) {
    const float other = __shfl_xor_sync(0xffffffffU, v, o);
    v = max ? fmaxf(v, other) : v + other;
  }
  return v;
}

__device__ TopCandidate warp_best(TopCandidate c) {
  for (int o = 16; o > 0; o >>= 1) {
    c = better(c,
               {__shfl_xor_sync(0xffffffffU, c.value, o), __shfl_xor_sync(0xffffffffU, c.id, o)});
  }
  return c;
}

// The token's softmax into p (in place) and probs.
__device__ void softmax_lane(float (&p)[kRouterPerLane], bool in, float* probs_row, int first) {
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kRouterPerLane; ++j) {
    m = fmaxf(m, p[j]);
  }
  m = warp_reduce(m, true);
  float s = 0;
#pragma unroll
  for (int j = 0; j < kRouterPerLane; ++j) {
    p[j] = in ? __expf(p[j] - m) : 0.0f;
    s += p[j];
  }
  const float inv = 1.0f / warp_reduce(s, false);
#pragma unroll
  for (int j = 0; j < kRouterPerLane; ++j) {
    p[j] = in ? p[j] * inv : -1.0f;  // -1: never among the top 8
  }
  if (in) {
    reinterpret_cast<float4*>(probs_row + first)[0] = make_float4(p[0], p[1], p[2], p[3]);
    reinterpret_cast<float4*>(probs_row + first)[1] = make_float4(p[4], p[5], p[6], p[7]);
  }
}

__global__ void __launch_bounds__(kRouterThreads)
    router_fwd(const float* logits, float* probs, int* ids, float* weights, long long rows, int w) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int first = kRouterPerLane * lane;
  const bool in = first < w;  // w a multiple of 8
  for (long long row = blockIdx.x * static_cast<long long>(kWarps) + threadIdx.x / 32; row < rows;
       row += static_cast<long long>(gridDim.x) * kWarps) {
    const float4 lo = in ? reinterpret_cast<const float4*>(logits + row * w + first)[0]
                         : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    const float4 hi = in ? reinterpret_cast<const float4*>(logits + row * w + first)[1] : lo;
    float p[kRouterPerLane] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    softmax_lane(p, in, probs + row * w, first);
    unsigned taken = 0;
    TopCandidate mine;
    for (int k = 0; k < kTopK; ++k) {
      const TopCandidate best = warp_best(lane_best(p, first, taken));
      if (best.id >= first && best.id < first + kRouterPerLane) {
        taken |= 1U << (best.id - first);
      }
      mine = lane == k ? best : mine;
    }
    if (lane < kTopK) {
      ids[row * kTopK + lane] = mine.id;
      weights[row * kTopK + lane] = mine.value;
    }
  }
}

// dlogits = p (d - sum p d), a warp per token, 128-bit loads and stores.
__global__ void __launch_bounds__(kRouterThreads)
    router_bwd(const float* probs, const float* dprobs, float* dlogits, long long rows, int w) {
  const int first = kRouterPerLane * static_cast<int>(threadIdx.x % 32);
  const bool in = first < w;
  const float4 zero = make_float4(0, 0, 0, 0);
  for (long long row = blockIdx.x * static_cast<long long>(kWarps) + threadIdx.x / 32; row < rows;
       row += static_cast<long long>(gridDim.x) * kWarps) {
    const auto* p = reinterpret_cast<const float4*>(probs + row * w + first);
    const auto* d = reinterpret_cast<const float4*>(dprobs + row * w + first);
    const float4 p0 = in ? p[0] : zero, p1 = in ? p[1] : zero;
    const float4 d0 = in ? d[0] : zero, d1 = in ? d[1] : zero;
    const float dot = warp_reduce(p0.x * d0.x + p0.y * d0.y + p0.z * d0.z + p0.w * d0.w +
                                      p1.x * d1.x + p1.y * d1.y + p1.z * d1.z + p1.w * d1.w,
                                  false);
    if (in) {
      auto* out = reinterpret_cast<float4*>(dlogits + row * w + first);
      out[0] = make_float4(p0.x * (d0.x - dot), p0.y * (d0.y - dot), p0.z * (d0.z - dot),
                           p0.w * (d0.w - dot));
      out[1] = make_float4(p1.x * (d1.x - dot), p1.y * (d1.y - dot), p1.z * (d1.z - dot),
                           p1.w * (d1.w - dot));
    }
  }
}

template <typename Kernel>
unsigned warp_blocks(Kernel kernel, long long rows) {
  const long long resident = resident_blocks(reinterpret_cast<const void*>(kernel), kRouterThreads);
  const long long need = (rows + kWarps - 1) / kWarps;
  return static_cast<unsigned>(need < resident ? need : resident);
}

void launch_fwd(const MemoryArgs& a) {
  router_fwd<<<warp_blocks(router_fwd, a.rows), kRouterThreads, 0, a.stream>>>(
      a.input<float>(0), a.output<float>(0), a.output<int>(1), a.output<float>(2), a.rows,
      static_cast<int>(a.width));
}

void launch_bwd(const MemoryArgs& a) {
  router_bwd<<<warp_blocks(router_bwd, a.rows), kRouterThreads, 0, a.stream>>>(
      a.input<float>(0), a.input<float>(1), a.output<float>(0), a.rows, static_cast<int>(a.width));
}
#endif

bool check_fwd(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> logits = k.in(0);
  std::vector<double> want;
  std::vector<double> top;
  for (std::size_t r = 0; r < as_size(k.rows); ++r) {
    std::vector<double> p = softmax_row(logits, r, w);
    want.insert(want.end(), p.begin(), p.end());
    std::sort(p.rbegin(), p.rend());
    top.insert(top.end(), p.begin(), p.begin() + kTopK);
  }
  const std::vector<double> probs = k.out(0);
  const std::vector<double> ids = k.out(1);
  std::vector<double> at_ids;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    at_ids.push_back(probs[(i / kTopK) * w + static_cast<std::size_t>(ids[i])]);
  }
  bool ok = judge("probs", probs, want, 1e-4, detail);
  ok = judge("top-8 weights", k.out(2), top, 1e-4, detail) && ok;
  return judge("top-8 ids", at_ids, top, 1e-4, detail) && ok;
}

bool check_bwd(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> p = k.in(0);
  const std::vector<double> d = k.in(1);
  std::vector<double> want;
  for (std::size_t r = 0; r < as_size(k.rows); ++r) {
    double dot = 0;
    for (std::size_t i = 0; i < w; ++i) {
      dot += p[r * w + i] * d[r * w + i];
    }
    for (std::size_t i = 0; i < w; ++i) {
      want.push_back(p[r * w + i] * (d[r * w + i] - dot));
    }
  }
  return judge("dlogits", k.out(0), want, 1e-4, detail);
}

constexpr std::int64_t top_k(std::int64_t rows, std::int64_t /*width*/) {
  return rows * kTopK;
}

constexpr MemoryBuffer kFwdIn[] = {{.name = "logits", .elem = Elem::F32, .count = per_element}};
constexpr MemoryBuffer kFwdOut[] = {{.name = "probs", .elem = Elem::F32, .count = per_element},
                                    {.name = "ids", .elem = Elem::I32, .count = top_k},
                                    {.name = "weights", .elem = Elem::F32, .count = top_k}};
constexpr MemoryBuffer kBwdIn[] = {{.name = "probs", .elem = Elem::F32, .count = per_element},
                                   {.name = "dprobs", .elem = Elem::F32, .count = per_element}};
constexpr MemoryBuffer kBwdOut[] = {{.name = "dlogits", .elem = Elem::F32, .count = per_element}};

}  // namespace

extern const MemoryKernelRow kRouterKernel{
    .name = "router",
    .width = kMaxExperts,
    .check_width = kMaxExperts,
    .fwd = {.in = kFwdIn,
            .out = kFwdOut,
            .bytes = {.per_element = 8, .per_row = 64},
            .width_multiple = kRouterPerLane,
            .max_width = kMaxExperts,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_fwd),
            .check = check_fwd},
    .bwd = {.in = kBwdIn,
            .out = kBwdOut,
            .bytes = {.per_element = 12},
            .width_multiple = kRouterPerLane,
            .max_width = kMaxExperts,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_bwd),
            .check = check_bwd},
};

}  // namespace hopsim::calib
