// attention_bwd_prep: FlashAttention's backward pre-pass (delta = sum over d of O dO, FP32) and
// post-pass (dQ from its FP32 accumulator to BF16), over w heads of d = 128 per row (token):
// DeepSeek-V3's 128 heads.
//   bwd  in O[r w 128], dO[r w 128], dQ accumulator[r w 128] (FP32)
//        out delta[r w] (FP32), dQ[r w 128]                   1284w a row (4 128 + 4 + 6 128)
// No forward pass.
#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

constexpr int kHeadDim = 128;

#ifdef __CUDACC__
// One warp per (token, head).
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

void launch(const MemoryArgs& a) {
  const long long pairs = a.rows * a.width;
  const long long blocks = (pairs + kThreads / 32 - 1) / (kThreads / 32);
  attn_bwd_prep<<<static_cast<unsigned>(blocks), kThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.input<bf16>(1), a.input<float>(2), a.output<float>(0), a.output<bf16>(1),
      pairs);
}
#endif

bool check(const MemoryReadback& k, std::string& detail) {
  const std::vector<double> o = k.in(0);
  const std::vector<double> d_o = k.in(1);
  std::vector<double> want;
  for (std::size_t pair = 0; pair < as_size(k.rows * k.width); ++pair) {
    double sum = 0;
    for (std::size_t d = 0; d < kHeadDim; ++d) {
      sum += o[pair * kHeadDim + d] * d_o[pair * kHeadDim + d];
    }
    want.push_back(sum);
  }
  const bool ok = judge("delta", k.out(0), want, 1e-4, detail);
  return judge("dQ", k.out(1), k.in(2), kMemoryTolerance, detail) && ok;
}

constexpr std::int64_t head_dims(std::int64_t rows, std::int64_t width) {
  return rows * width * kHeadDim;
}

constexpr MemoryBuffer kIn[] = {{.name = "O", .count = head_dims},
                                {.name = "dO", .count = head_dims},
                                {.name = "dQ accumulator", .elem = Elem::F32, .count = head_dims}};
constexpr MemoryBuffer kOut[] = {{.name = "delta", .elem = Elem::F32, .count = per_element},
                                 {.name = "dQ", .count = head_dims}};

}  // namespace

extern const MemoryKernelRow kAttnBwdPrepKernel{
    .name = "attention_bwd_prep",
    .width = 128,
    .check_width = 4,
    .bwd = {.in = kIn,
            .out = kOut,
            .bytes = {.per_element = 4 * kHeadDim + 4 + 6 * kHeadDim},
            .launch = HOPSIM_MEMORY_LAUNCH(launch),
            .check = check},
};

}  // namespace hopsim::calib
