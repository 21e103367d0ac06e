// residual: the residual add, BF16 over rows of DeepSeek-V3's hidden 7168.
//   fwd  in a[r w], b[r w]  out c[r w]  6w a row
//   bwd  the same kernel (the backward sums two gradients), checked as the forward
#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

#ifdef __CUDACC__
// A grid-stride loop over 8-element (128-bit) groups, as many blocks as stay resident.
__global__ void residual(const bf16* a, const bf16* b, bf16* c, long long groups) {
  grid_stride(groups, [&](long long i) {
    const Bf16x8 x = load8(a + 8 * i);
    const Bf16x8 y = load8(b + 8 * i);
    Bf16x8 z;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      z.v[j] = to_b(to_f(x.v[j]) + to_f(y.v[j]));
    }
    store8(c + 8 * i, z);
  });
}

void launch(const MemoryArgs& a) {
  const long long groups = a.rows * a.width / 8;  // width_multiple 8
  residual<<<stride_blocks(residual, groups, kThreads), kThreads, 0, a.stream>>>(
      a.input<bf16>(0), a.input<bf16>(1), a.output<bf16>(0), groups);
}
#endif

bool check(const MemoryReadback& k, std::string& detail) {
  const std::vector<double> a = k.in(0);
  const std::vector<double> b = k.in(1);
  std::vector<double> want;
  for (std::size_t i = 0; i < a.size(); ++i) {
    want.push_back(a[i] + b[i]);
  }
  return judge("c", k.out(0), want, kMemoryTolerance, detail);
}

constexpr MemoryBuffer kIn[] = {{.name = "a", .count = per_element},
                                {.name = "b", .count = per_element}};
constexpr MemoryBuffer kOut[] = {{.name = "c", .count = per_element}};
constexpr MemoryPass kPass{.in = kIn,
                           .out = kOut,
                           .bytes = {.per_element = 6},
                           .width_multiple = 8,
                           .launch = HOPSIM_MEMORY_LAUNCH(launch),
                           .check = check};

}  // namespace

extern const MemoryKernelRow kResidualKernel{
    .name = "residual", .width = 7168, .check_width = 512, .fwd = kPass, .bwd = same_kernel(kPass)};

}  // namespace hopsim::calib
