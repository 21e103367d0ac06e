// rotary: rotary position embedding on 128 heads x 64 rotated dims (DeepSeek-V3's queries),
// BF16, the angle by row; the backward rotates back.
//   fwd, bwd  in x[r w]  out y[r w]  4w a row (w a multiple of 64)
#include <cmath>

#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

constexpr int kRotaryDims = 64;

#ifdef __CUDACC__
// Pairs (2j, 2j+1) of each head's 64 rotated dims, angle row * 10000^(-2j/64) times `sign`.
__global__ void rotary(const bf16* x, bf16* y, int w, float sign) {
  const long long row = blockIdx.x;
  for (int p = threadIdx.x; p < w / 2; p += blockDim.x) {
    const int j = p % (kRotaryDims / 2);
    const float angle = sign * static_cast<float>(row) * powf(10000.0f, -2.0f * j / kRotaryDims);
    float s;
    float c;
    sincosf(angle, &s, &c);
    const float a = to_f(x[row * w + 2 * p]);
    const float b = to_f(x[row * w + 2 * p + 1]);
    y[row * w + 2 * p] = to_b(a * c - b * s);
    y[row * w + 2 * p + 1] = to_b(a * s + b * c);
  }
}

template <int kSign>
void launch(const MemoryArgs& a) {
  rotary<<<row_blocks(a.rows), kThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.output<bf16>(0), static_cast<int>(a.width), static_cast<float>(kSign));
}
#endif

template <int kSign>
bool check(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> x = k.in(0);
  std::vector<double> want(x.size());
  for (std::size_t r = 0; r < as_size(k.rows); ++r) {
    for (std::size_t p = 0; p < w / 2; ++p) {
      const auto j = static_cast<double>(p % (kRotaryDims / 2));
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
