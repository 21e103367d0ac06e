// fp8_cast: BF16 rows of DeepSeek-V3's hidden 7168 quantized to FP8 E4M3 with a scale per row and
// group of 128 (amax / 448), writing the row-major copy and the transposed one the weight
// gradient reads.
//   fwd  in x[r w]  out q[r w], q^T[w r] (FP8), scales[r w/128] (FP32)  4w a row
//   bwd  the same kernel (an output gradient cast the same way), checked as the forward
// The scales (w/32 bytes a row) are left out by the closed form.
#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

constexpr int kCastGroup = 128;

#ifdef __CUDACC__
// A tile of 32 rows x 128 columns per block (128 threads): per row and group of 128 a scale of
// amax / 448, the row-major FP8 copy and the transposed one.
__global__ void fp8_cast(const bf16* x, fp8* q, fp8* qt, float* scales, long long rows, int w) {
  __shared__ float tile[32][kCastGroup + 1];
  __shared__ float scale[32];
  const long long row0 = static_cast<long long>(blockIdx.y) * 32;
  const int col0 = blockIdx.x * kCastGroup;
  const int c = threadIdx.x;
  for (int r = 0; r < 32; ++r) {
    const long long row = row0 + r;
    tile[r][c] = row < rows ? to_f(x[row * w + col0 + c]) : 0.0f;
  }
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  for (int r = warp; r < 32; r += 4) {
    float m = 0;
    for (int i = lane; i < kCastGroup; i += 32) {
      m = fmaxf(m, fabsf(tile[r][i]));
    }
    for (int o = 16; o > 0; o >>= 1) {
      m = fmaxf(m, __shfl_xor_sync(0xffffffffU, m, o));
    }
    if (lane == 0) {
      scale[r] = m > 0 ? m / 448.0f : 1.0f;
      if (row0 + r < rows) {
        scales[(row0 + r) * (w / kCastGroup) + blockIdx.x] = scale[r];
      }
    }
  }
  __syncthreads();
  for (int r = 0; r < 32; ++r) {
    const long long row = row0 + r;
    if (row < rows) {
      const fp8 v(tile[r][c] / scale[r]);
      q[row * w + col0 + c] = v;
      qt[static_cast<long long>(col0 + c) * rows + row] = v;
    }
  }
}

void launch(const MemoryArgs& a) {
  const dim3 grid(static_cast<unsigned>(a.width / kCastGroup),
                  static_cast<unsigned>((a.rows + 31) / 32));
  fp8_cast<<<grid, kCastGroup, 0, a.stream>>>(a.input<bf16>(0), a.output<fp8>(0), a.output<fp8>(1),
                                              a.output<float>(2), a.rows,
                                              static_cast<int>(a.width));
}
#endif

// Dequantized within kFp8Tolerance of the input; the transposed copy exactly the row-major one.
bool check(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::size_t rows = as_size(k.rows);
  const std::vector<double> x = k.in(0);
  const std::vector<double> q = k.out(0);
  const std::vector<double> qt = k.out(1);
  const std::vector<double> scales = k.out(2);
  std::vector<double> dequant(x.size());
  std::vector<double> transposed(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < w; ++i) {
      dequant[r * w + i] = q[r * w + i] * scales[r * (w / kCastGroup) + i / kCastGroup];
      transposed[r * w + i] = qt[i * rows + r];
    }
  }
  const bool ok = judge("dequantized", dequant, x, kFp8Tolerance, detail);
  return judge("transposed", transposed, q, 0.0, detail) && ok;
}

constexpr std::int64_t groups(std::int64_t rows, std::int64_t width) {
  return rows * (width / kCastGroup);
}

constexpr MemoryBuffer kIn[] = {{.name = "x", .count = per_element}};
constexpr MemoryBuffer kOut[] = {
    {.name = "q", .elem = Elem::Fp8E4m3, .count = per_element},
    {.name = "q^T", .elem = Elem::Fp8E4m3, .count = per_element},
    {.name = "scales", .elem = Elem::F32, .count = groups, .counted = false}};
constexpr MemoryPass kPass{.in = kIn,
                           .out = kOut,
                           .bytes = {.per_element = 4},
                           .width_multiple = kCastGroup,
                           .launch = HOPSIM_MEMORY_LAUNCH(launch),
                           .check = check};

}  // namespace

extern const MemoryKernelRow kFp8CastKernel{
    .name = "fp8_cast", .width = 7168, .check_width = 256, .fwd = kPass, .bwd = same_kernel(kPass)};

}  // namespace hopsim::calib
