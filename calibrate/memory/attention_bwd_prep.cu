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
// FlashAttention's bwd preprocess and dQ conversion in one pass: 16 lanes per (token, head), each
// an 8-element (128-bit) group of O and dO and the matching 8 FP32 of the dQ accumulator (two
// 128-bit loads), dQ stored 128 bits at a time, delta a 16-lane shuffle sum. Grid-stride over the
// groups; a warp's lanes iterate together (the count rounded up to 32) so that the shuffles
// always see the whole warp.
constexpr int kLanesPerHead = kHeadDim / 8;

__global__ void attn_bwd_prep(const bf16* o, const bf16* d_o, const float* dq_acc, float* delta,
                              bf16* dq, long long groups) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long padded = (groups + 31) / 32 * 32;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < padded;
       i += stride) {
    const bool in = i < groups;
    float sum = 0;
    if (in) {
      const Bf16x8 a = load8(o + 8 * i);
      const Bf16x8 b = load8(d_o + 8 * i);
      const float4 lo = reinterpret_cast<const float4*>(dq_acc + 8 * i)[0];
      const float4 hi = reinterpret_cast<const float4*>(dq_acc + 8 * i)[1];
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        sum += to_f(a.v[e]) * to_f(b.v[e]);
      }
      const float acc[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
      Bf16x8 q;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        q.v[e] = to_b(acc[e]);
      }
      store8(dq + 8 * i, q);
    }
    for (int off = kLanesPerHead / 2; off > 0; off >>= 1) {
      sum += __shfl_xor_sync(0xffffffffU, sum, off);
    }
    if (in && i % kLanesPerHead == 0) {
      delta[i / kLanesPerHead] = sum;
    }
  }
}

void launch(const MemoryArgs& a) {
  const long long groups = a.rows * a.width * kLanesPerHead;
  attn_bwd_prep<<<stride_blocks(attn_bwd_prep, groups, kThreads), kThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.input<bf16>(1), a.input<float>(2), a.output<float>(0), a.output<bf16>(1),
      groups);
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
