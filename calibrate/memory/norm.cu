// norm: RMSNorm over rows of DeepSeek-V3's hidden 7168, BF16, with the weight and 1/rms.
//   fwd  in x[r w], weight[w]                    out y[r w], rstd[r] (FP32)      4w + 4 a row
//   bwd  in x[r w], dy[r w], weight[w], rstd[r]  out dx[r w]                     6w + 4 a row
// The weight is read once per call: the closed form, per token, leaves it out.
#include <cmath>
#include <cstddef>

#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

#ifdef __CUDACC__
// One block per row, one pass: each thread keeps its 8-element (128-bit) groups of the row in
// registers between the reduction and the output, as Transformer Engine's and Apex's RMSNorm
// kernels do. Rows up to kNormThreads x kNormGroups x 8 = 8192 wide.
constexpr int kNormThreads = 128;
constexpr int kNormGroups = 8;

__global__ void __launch_bounds__(kNormThreads)
    norm_fwd(const bf16* x, const bf16* weight, bf16* y, float* rstd, int w) {
  const long long row = blockIdx.x;
  const int groups = w / 8;
  Bf16x8 v[kNormGroups];
  float ss = 0;
#pragma unroll
  for (int j = 0; j < kNormGroups; ++j) {
    const int g = static_cast<int>(threadIdx.x) + j * kNormThreads;
    if (g < groups) {
      v[j] = load8(x + row * w + 8 * g);
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float f = to_f(v[j].v[e]);
        ss += f * f;
      }
    }
  }
  const float r = rsqrtf(block_sum(ss) / static_cast<float>(w) + 1e-6f);
#pragma unroll
  for (int j = 0; j < kNormGroups; ++j) {
    const int g = static_cast<int>(threadIdx.x) + j * kNormThreads;
    if (g < groups) {
      const Bf16x8 wt = load8(weight + 8 * g);
      Bf16x8 o;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        o.v[e] = to_b(to_f(v[j].v[e]) * r * to_f(wt.v[e]));
      }
      store8(y + row * w + 8 * g, o);
    }
  }
  if (threadIdx.x == 0) {
    rstd[row] = r;
  }
}

// dx = r (g - x r^2 mean(g x)), g = dy * weight; x and dy read once, kept in registers.
__global__ void __launch_bounds__(kNormThreads) norm_bwd(const bf16* x, const bf16* dy,
                                                         const bf16* weight, const float* rstd,
                                                         bf16* dx, int w) {
  const long long row = blockIdx.x;
  const int groups = w / 8;
  const float r = rstd[row];
  Bf16x8 xv[kNormGroups];
  Bf16x8 dv[kNormGroups];
  float dot = 0;
#pragma unroll
  for (int j = 0; j < kNormGroups; ++j) {
    const int g = static_cast<int>(threadIdx.x) + j * kNormThreads;
    if (g < groups) {
      xv[j] = load8(x + row * w + 8 * g);
      dv[j] = load8(dy + row * w + 8 * g);
      const Bf16x8 wt = load8(weight + 8 * g);
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        dot += to_f(dv[j].v[e]) * to_f(wt.v[e]) * to_f(xv[j].v[e]);
      }
    }
  }
  const float mean = block_sum(dot) / static_cast<float>(w);
#pragma unroll
  for (int j = 0; j < kNormGroups; ++j) {
    const int g = static_cast<int>(threadIdx.x) + j * kNormThreads;
    if (g < groups) {
      const Bf16x8 wt = load8(weight + 8 * g);  // 14 KB a call: from L1/L2
      Bf16x8 o;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float gf = to_f(dv[j].v[e]) * to_f(wt.v[e]);
        o.v[e] = to_b(r * (gf - to_f(xv[j].v[e]) * r * r * mean));
      }
      store8(dx + row * w + 8 * g, o);
    }
  }
}

void launch_fwd(const MemoryArgs& a) {
  norm_fwd<<<row_blocks(a.rows), kNormThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.input<bf16>(1), a.output<bf16>(0), a.output<float>(1),
      static_cast<int>(a.width));
}

void launch_bwd(const MemoryArgs& a) {
  norm_bwd<<<row_blocks(a.rows), kNormThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.input<bf16>(1), a.input<bf16>(2), a.input<float>(3), a.output<bf16>(0),
      static_cast<int>(a.width));
}
#endif

bool check_fwd(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> x = k.in(0);
  const std::vector<double> wt = k.in(1);
  std::vector<double> want;
  std::vector<double> rstd(as_size(k.rows));
  for (std::size_t r = 0; r < rstd.size(); ++r) {
    double ss = 0;
    for (std::size_t i = 0; i < w; ++i) {
      ss += x[r * w + i] * x[r * w + i];
    }
    rstd[r] = 1 / std::sqrt(ss / static_cast<double>(w) + 1e-6);
    for (std::size_t i = 0; i < w; ++i) {
      want.push_back(x[r * w + i] * rstd[r] * wt[i]);
    }
  }
  const bool ok = judge("y", k.out(0), want, kMemoryTolerance, detail);
  return judge("rstd", k.out(1), rstd, kMemoryTolerance, detail) && ok;
}

bool check_bwd(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> x = k.in(0);
  const std::vector<double> dy = k.in(1);
  const std::vector<double> wt = k.in(2);
  const std::vector<double> rstd = k.in(3);
  std::vector<double> want;
  for (std::size_t r = 0; r < rstd.size(); ++r) {
    double dot = 0;
    for (std::size_t i = 0; i < w; ++i) {
      dot += dy[r * w + i] * wt[i] * x[r * w + i];
    }
    const double mean = dot / static_cast<double>(w);
    for (std::size_t i = 0; i < w; ++i) {
      const double g = dy[r * w + i] * wt[i];
      want.push_back(rstd[r] * (g - x[r * w + i] * rstd[r] * rstd[r] * mean));
    }
  }
  return judge("dx", k.out(0), want, kMemoryTolerance, detail);
}

constexpr std::int64_t one_row(std::int64_t /*rows*/, std::int64_t width) {
  return width;
}

constexpr MemoryBuffer kX{.name = "x", .count = per_element};
constexpr MemoryBuffer kWeight{.name = "weight", .count = one_row, .counted = false};
constexpr MemoryBuffer kRstd{.name = "rstd", .elem = Elem::F32, .count = per_row};
constexpr MemoryBuffer kFwdIn[] = {kX, kWeight};
constexpr MemoryBuffer kFwdOut[] = {{.name = "y", .count = per_element}, kRstd};
constexpr MemoryBuffer kBwdIn[] = {kX, {.name = "dy", .count = per_element}, kWeight, kRstd};
constexpr MemoryBuffer kBwdOut[] = {{.name = "dx", .count = per_element}};

}  // namespace

extern const MemoryKernelRow kNormKernel{
    .name = "norm",
    .width = 7168,
    .check_width = 512,
    .fwd = {.in = kFwdIn,
            .out = kFwdOut,
            .bytes = {.per_element = 4, .per_row = 4},
            .width_multiple = 8,
            .max_width = 8192,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_fwd),
            .check = check_fwd},
    .bwd = {.in = kBwdIn,
            .out = kBwdOut,
            .bytes = {.per_element = 6, .per_row = 4},
            .width_multiple = 8,
            .max_width = 8192,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_bwd),
            .check = check_bwd},
};

}  // namespace hopsim::calib
