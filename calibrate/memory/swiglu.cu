// swiglu: SwiGLU over rows of DeepSeek-V3's expert FFN 2048, BF16, gate and up side by side.
//   fwd  in gate|up[r 2w]           out y[r w]            6w a row
//   bwd  in gate|up[r 2w], dy[r w]  out dgate|dup[r 2w]   10w a row
#include <cmath>

#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

#ifdef __CUDACC__
__device__ float sigmoid(float v) {
  return 1.0f / (1.0f + __expf(-v));
}

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

void launch_fwd(const MemoryArgs& a) {
  swiglu_fwd<<<row_blocks(a.rows), kThreads, 0, a.stream>>>(a.input<bf16>(0), a.output<bf16>(0),
                                                            static_cast<int>(a.width));
}

void launch_bwd(const MemoryArgs& a) {
  swiglu_bwd<<<row_blocks(a.rows), kThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.input<bf16>(1), a.output<bf16>(0), static_cast<int>(a.width));
}
#endif

double sigmoid_of(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

bool check_fwd(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> gu = k.in(0);
  std::vector<double> want;
  for (std::size_t r = 0; r < as_size(k.rows); ++r) {
    for (std::size_t i = 0; i < w; ++i) {
      const double g = gu[r * 2 * w + i];
      want.push_back(g * sigmoid_of(g) * gu[r * 2 * w + w + i]);
    }
  }
  return judge("y", k.out(0), want, kMemoryTolerance, detail);
}

bool check_bwd(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> gu = k.in(0);
  const std::vector<double> dy = k.in(1);
  std::vector<double> want(gu.size());
  for (std::size_t r = 0; r < as_size(k.rows); ++r) {
    for (std::size_t i = 0; i < w; ++i) {
      const double g = gu[r * 2 * w + i];
      const double u = gu[r * 2 * w + w + i];
      const double s = sigmoid_of(g);
      const double d = dy[r * w + i];
      want[r * 2 * w + i] = d * u * s * (1 + g * (1 - s));
      want[r * 2 * w + w + i] = d * g * s;
    }
  }
  return judge("dgate|dup", k.out(0), want, kMemoryTolerance, detail);
}

constexpr std::int64_t gate_and_up(std::int64_t rows, std::int64_t width) {
  return 2 * rows * width;
}

constexpr MemoryBuffer kGateUp{.name = "gate|up", .count = gate_and_up};
constexpr MemoryBuffer kFwdIn[] = {kGateUp};
constexpr MemoryBuffer kFwdOut[] = {{.name = "y", .count = per_element}};
constexpr MemoryBuffer kBwdIn[] = {kGateUp, {.name = "dy", .count = per_element}};
constexpr MemoryBuffer kBwdOut[] = {{.name = "dgate|dup", .count = gate_and_up}};

}  // namespace

extern const MemoryKernelRow kSwiGluKernel{
    .name = "swiglu",
    .width = 2048,
    .check_width = 256,
    .fwd = {.in = kFwdIn,
            .out = kFwdOut,
            .bytes = {.per_element = 6},
            .launch = HOPSIM_MEMORY_LAUNCH(launch_fwd),
            .check = check_fwd},
    .bwd = {.in = kBwdIn,
            .out = kBwdOut,
            .bytes = {.per_element = 10},
            .launch = HOPSIM_MEMORY_LAUNCH(launch_bwd),
            .check = check_bwd},
};

}  // namespace hopsim::calib
