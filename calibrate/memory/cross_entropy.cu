// cross_entropy: the loss over rows of BF16 logits, Llama 3's vocabulary over TP 8 (16,032),
// as one online-softmax kernel (what workloads/costs/layer_kernels.hpp calls `online`).
//   fwd  in logits[r w] (read twice), targets[r] (int32)  out dlogits[r w], loss[r] (FP32)
//                                                                           6w + 8 a row
//   bwd  in dlogits[r w], dloss[r] (FP32)                 out dlogits scaled[r w]  4w + 4
#include <cmath>

#include "calibrate/memory/kernel_math.hpp"
#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

#ifdef __CUDACC__
// One block per row, as Liger's and Apex's cross-entropy kernels: a first pass over the row in
// 8-element (128-bit) groups keeps a running maximum and sum of exponentials (OnlineMax), merged
// over the block; the loss is log(sum) + max - x[target]; a second pass reads the row again and
// writes the gradient softmax - onehot(target) with 128-bit stores. w a multiple of 8.
__global__ void cross_entropy_fwd(const bf16* logits, const int* targets, bf16* grad, float* loss,
                                  int w) {
  const long long row = blockIdx.x;
  const bf16* x = logits + row * w;
  OnlineMax run;
  for (int g = static_cast<int>(threadIdx.x); g < w / 8; g += blockDim.x) {
    const Bf16x8 v = load8(x + 8 * g);
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      run.push(to_f(v.v[e]));
    }
  }
  const float row_max = block_max(run.max);
  const float sum = block_sum(run.sum_at(row_max));
  const int t = targets[row];
  if (threadIdx.x == 0) {
    loss[row] = logf(sum) + row_max - to_f(x[t]);
  }
  const float inv = 1.0f / sum;
  for (int g = static_cast<int>(threadIdx.x); g < w / 8; g += blockDim.x) {
    const Bf16x8 v = load8(x + 8 * g);
    Bf16x8 out;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const float p = __expf(to_f(v.v[e]) - row_max) * inv;
      out.v[e] = to_b(8 * g + e == t ? p - 1.0f : p);
    }
    store8(grad + row * w + 8 * g, out);
  }
}

// The saved gradient times the loss's: grid-stride over 8-element (128-bit) groups.
__global__ void cross_entropy_bwd(const bf16* grad, const float* dloss, bf16* dlogits, int w,
                                  long long groups) {
  const long long per_row = w / 8;
  grid_stride(groups, [&](long long i) {
    const float d = dloss[i / per_row];
    const Bf16x8 v = load8(grad + 8 * i);
    Bf16x8 out;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      out.v[e] = to_b(to_f(v.v[e]) * d);
    }
    store8(dlogits + 8 * i, out);
  });
}

void launch_fwd(const MemoryArgs& a) {
  cross_entropy_fwd<<<row_blocks(a.rows), kThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.input<int>(1), a.output<bf16>(0), a.output<float>(1),
      static_cast<int>(a.width));
}

void launch_bwd(const MemoryArgs& a) {
  const long long groups = a.rows * a.width / 8;
  cross_entropy_bwd<<<stride_blocks(cross_entropy_bwd, groups, kThreads), kThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.input<float>(1), a.output<bf16>(0), static_cast<int>(a.width), groups);
}
#endif

bool check_fwd(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> x = k.in(0);
  const std::vector<double> targets = k.in(1);
  std::vector<double> want;
  std::vector<double> loss;
  for (std::size_t r = 0; r < targets.size(); ++r) {
    const std::vector<double> p = softmax_row(x, r, w);
    const auto t = static_cast<std::size_t>(targets[r]);
    loss.push_back(-std::log(p[t]));  // log(sum of exp) - x[t]
    for (std::size_t i = 0; i < w; ++i) {
      want.push_back(p[i] - (i == t ? 1.0 : 0.0));
    }
  }
  const bool ok = judge("dlogits", k.out(0), want, kMemoryTolerance, detail);
  return judge("loss", k.out(1), loss, 1e-4, detail) && ok;
}

bool check_bwd(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> grad = k.in(0);
  const std::vector<double> dloss = k.in(1);
  std::vector<double> want;
  for (std::size_t i = 0; i < grad.size(); ++i) {
    want.push_back(grad[i] * dloss[i / w]);
  }
  return judge("dlogits", k.out(0), want, kMemoryTolerance, detail);
}

constexpr MemoryBuffer kFwdIn[] = {
    {.name = "logits", .count = per_element, .moves = 2},
    {.name = "targets", .elem = Elem::I32, .count = per_row, .fill = Fill::Targets}};
constexpr MemoryBuffer kFwdOut[] = {{.name = "dlogits", .count = per_element},
                                    {.name = "loss", .elem = Elem::F32, .count = per_row}};
constexpr MemoryBuffer kBwdIn[] = {{.name = "dlogits", .count = per_element},
                                   {.name = "dloss", .elem = Elem::F32, .count = per_row}};
constexpr MemoryBuffer kBwdOut[] = {{.name = "dlogits scaled", .count = per_element}};

}  // namespace

extern const MemoryKernelRow kCrossEntropyKernel{
    .name = "cross_entropy",
    .width = 128256 / 8,
    .check_width = 1000,
    .fwd = {.in = kFwdIn,
            .out = kFwdOut,
            .bytes = {.per_element = 6, .per_row = 8},
            .width_multiple = 8,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_fwd),
            .check = check_fwd},
    .bwd = {.in = kBwdIn,
            .out = kBwdOut,
            .bytes = {.per_element = 4, .per_row = 4},
            .width_multiple = 8,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_bwd),
            .check = check_bwd},
};

}  // namespace hopsim::calib
