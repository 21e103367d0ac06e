// router: the MoE router over DeepSeek-V3's 256 experts, FP32 scores: a softmax and the top 8.
//   fwd  in logits[r w]              out probs[r w], top-8 ids[r 8] (int32), weights[r 8]
//                                                                           8w + 64 a row
//   bwd  in probs[r w], dprobs[r w]  out dlogits[r w]                       12w a row
// One block of 256 threads per row, so w is at most 256.
#include <algorithm>
#include <cmath>

#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

constexpr int kTopK = 8;
constexpr int kMaxExperts = 256;

#ifdef __CUDACC__
// Softmax, then the top 8 by repeated arg-max (ties to the lower id).
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
  __shared__ float best[kMaxExperts];
  __shared__ int arg[kMaxExperts];
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

void launch_fwd(const MemoryArgs& a) {
  router_fwd<<<row_blocks(a.rows), kMaxExperts, 0, a.stream>>>(
      a.input<float>(0), a.output<float>(0), a.output<int>(1), a.output<float>(2),
      static_cast<int>(a.width));
}

void launch_bwd(const MemoryArgs& a) {
  router_bwd<<<row_blocks(a.rows), kMaxExperts, 0, a.stream>>>(
      a.input<float>(0), a.input<float>(1), a.output<float>(0), static_cast<int>(a.width));
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
            .max_width = kMaxExperts,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_fwd),
            .check = check_fwd},
    .bwd = {.in = kBwdIn,
            .out = kBwdOut,
            .bytes = {.per_element = 12},
            .max_width = kMaxExperts,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_bwd),
            .check = check_bwd},
};

}  // namespace hopsim::calib
