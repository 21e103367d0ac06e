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

// Grid-stride over 8-element (128-bit) groups of the output: group i is row i / (w/8), and its
// gate and up are the same columns of the row's two halves.
__global__ void swiglu_fwd(const bf16* gu, bf16* y, int w, long long groups) {
  const long long per_row = w / 8;
  grid_stride(groups, [&](long long i) {
    const long long row = i / per_row;
    const long long col = 8 * (i % per_row);
    const Bf16x8 g = load8(gu + row * 2 * w + col);
    const Bf16x8 u = load8(gu + row * 2 * w + w + col);
    Bf16x8 out;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float gf = to_f(g.v[j]);
      out.v[j] = to_b(gf * sigmoid(gf) * to_f(u.v[j]));
    }
    store8(y + row * w + col, out);
  });
}

__global__ void swiglu_bwd(const bf16* gu, const bf16* dy, bf16* dgu, int w, long long groups) {
  const long long per_row = w / 8;
  grid_stride(groups, [&](long long i) {
    const long long row = i / per_row;
    const long long col = 8 * (i % per_row);
    const Bf16x8 g = load8(gu + row * 2 * w + col);
    const Bf16x8 u = load8(gu + row * 2 * w + w + col);
    const Bf16x8 d = load8(dy + row * w + col);
    Bf16x8 dg;
    Bf16x8 du;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float gf = to_f(g.v[j]);
      const float df = to_f(d.v[j]);
      const float s = sigmoid(gf);
      dg.v[j] = to_b(df * to_f(u.v[j]) * s * (1.0f + gf * (1.0f - s)));
      du.v[j] = to_b(df * gf * s);
    }
    store8(dgu + row * 2 * w + col, dg);
    store8(dgu + row * 2 * w + w + col, du);
  });
}

void launch_fwd(const MemoryArgs& a) {
  const long long groups = a.rows * a.width / 8;
  swiglu_fwd<<<stride_blocks(swiglu_fwd, groups, kThreads), kThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.output<bf16>(0), static_cast<int>(a.width), groups);
}

void launch_bwd(const MemoryArgs& a) {
  const long long groups = a.rows * a.width / 8;
  swiglu_bwd<<<stride_blocks(swiglu_bwd, groups, kThreads), kThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.input<bf16>(1), a.output<bf16>(0), static_cast<int>(a.width), groups);
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
            .width_multiple = 8,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_fwd),
            .check = check_fwd},
    .bwd = {.in = kBwdIn,
            .out = kBwdOut,
            .bytes = {.per_element = 10},
            .width_multiple = 8,
            .launch = HOPSIM_MEMORY_LAUNCH(launch_bwd),
            .check = check_bwd},
};

}  // namespace hopsim::calib
