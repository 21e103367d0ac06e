// rotary: rotary position embedding on 128 heads x 64 rotated dims (DeepSeek-V3's queries),
// BF16, the angle by row; the backward rotates back.
//   fwd, bwd  in x[r w]  out y[r w]  4w a row (w a multiple of 64)
#include <cmath>

#include "calibrate/memory/kernel_math.hpp"
#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

#ifdef __CUDACC__
// Grid-stride over rows, a block per row at a time: the row's 32 angles' sines and cosines once
// into shared memory (every head shares them), then the row in 8-element (128-bit) groups, each
// 4 pairs (2j, 2j+1) of one head, angle row * 10000^(-2j/64) times `sign`. One read, one write.
constexpr int kRotaryThreads = 256;

__global__ void __launch_bounds__(kRotaryThreads)
    rotary(const bf16* x, bf16* y, long long rows, int w, float sign) {
  __shared__ float cs[kRotaryDims / 2];
  __shared__ float sn[kRotaryDims / 2];
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    if (threadIdx.x < kRotaryDims / 2) {
      const float inv_freq = powf(10000.0f, -2.0f * static_cast<float>(threadIdx.x) / kRotaryDims);
      sincosf(sign * static_cast<float>(row) * inv_freq, &sn[threadIdx.x], &cs[threadIdx.x]);
    }
    __syncthreads();
    for (int g = static_cast<int>(threadIdx.x); g < w / 8; g += kRotaryThreads) {
      const Bf16x8 v = load8(x + row * w + 8 * g);
      const int j0 = rotary_freq(8 * g);
      Bf16x8 o;
#pragma unroll
      for (int p = 0; p < 4; ++p) {
        const float a = to_f(v.v[2 * p]);
        const float b = to_f(v.v[2 * p + 1]);
        o.v[2 * p] = to_b(a * cs[j0 + p] - b * sn[j0 + p]);
        o.v[2 * p + 1] = to_b(a * sn[j0 + p] + b * cs[j0 + p]);
      }
      store8(y + row * w + 8 * g, o);
    }
    __syncthreads();
  }
}

template <int kSign>
void launch(const MemoryArgs& a) {
  const long long resident = resident_blocks(reinterpret_cast<const void*>(rotary), kRotaryThreads);
  rotary<<<static_cast<unsigned>(a.rows < resident ? a.rows : resident), kRotaryThreads, 0,
           a.stream>>>(a.input<bf16>(0), a.output<bf16>(0), a.rows, static_cast<int>(a.width),
                       static_cast<float>(kSign));
}
#endif

template <int kSign>
bool check(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> x = k.in(0);
  std::vector<double> want(x.size());
  for (std::size_t r = 0; r < as_size(k.rows); ++r) {
    for (std::size_t p = 0; p < w / 2; ++p) {
      const auto j = static_cast<double>(p % (kRotaryDims / 2));  // rotary_freq(2p), spelled out
      const double angle =
          kSign * static_cast<double>(r) * std::pow(10000.0, -2.0 * j / kRotaryDims);
      const double a = x[r * w + 2 * p];
      const double b = x[r * w + 2 * p + 1];
      want[r * w + 2 * p] = a * std::cos(angle) - b * std::sin(angle);
      want[r * w + 2 * p + 1] = a * std::sin(angle) + b * std::cos(angle);
    }
  }
  return judge("y", k.out(0), want, kMemoryTolerance, detail);
}

constexpr MemoryBuffer kIn[] = {{.name = "x", .count = per_element}};
constexpr MemoryBuffer kOut[] = {{.name = "y", .count = per_element}};

template <int kSign>
constexpr MemoryPass pass() {
  return {.in = kIn,
          .out = kOut,
          .bytes = {.per_element = 4},
          .width_multiple = kRotaryDims,
          .launch = HOPSIM_MEMORY_LAUNCH(launch<kSign>),
          .check = check<kSign>};
}

}  // namespace

extern const MemoryKernelRow kRotaryKernel{.name = "rotary",
                                           .width = 128 * kRotaryDims,
                                           .check_width = 256,
                                           .fwd = pass<1>(),
                                           .bwd = pass<-1>()};

}  // namespace hopsim::calib
