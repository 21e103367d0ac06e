// fp8_cast: BF16 rows of DeepSeek-V3's hidden 7168 quantized to FP8 E4M3 with a scale per row and
// group of 128 (amax / 448), writing the row-major copy and the transposed one the weight
// gradient reads.
//   fwd  in x[r w]  out q[r w], q^T[w r] (FP8), scales[r w/128] (FP32)  4w a row
//   bwd  the same kernel (an output gradient cast the same way), checked as the forward
// The scales (w/32 bytes a row) are left out by the closed form.
#include "calibrate/memory/kernel_math.hpp"
#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

#ifdef __CUDACC__
// Transformer Engine's cast_transpose, per 1x128 scales: each tile of 64 rows x 128 columns (one
// scale group) is read once with 128-bit loads, quantized in registers (a row's amax over the
// half-warp that holds it) and written row-major with 64-bit stores; the FP8 tile goes through
// shared memory so that q^T is written 16 rows (128 bits) at a time. Grid-stride over tiles.
// The shared tile is row-major, rows padded to 132 bytes: the half-warps' 32-bit writes hit
// distinct banks, and the column reads of the transposed write conflict at most 2-way.
constexpr int kTileStride = kCastGroup + 4;
using TileBytes = unsigned char[kTileStride];

struct CastTile {
  long long row0;
  int col0;
};

// Quantizes the thread's read chunks, writing q, the scales and the tile's FP8 bytes.
__device__ void cast_rows(const bf16* x, fp8* q, float* scales, TileBytes* qs, CastTile t,
                          long long rows, int w) {
  for (int c = static_cast<int>(threadIdx.x); c < kCastReadChunks; c += kCastThreads) {
    const TileCell cell = cast_read_chunk(c);
    const long long row = t.row0 + cell.row;
    const bool in = row < rows;  // the half-warp of a row is all in or all out
    Bf16x8 v{};
    if (in) {
      v = load8(x + row * w + t.col0 + cell.col);
    }
    float m = 0;
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      m = fmaxf(m, fabsf(to_f(v.v[e])));
    }
    for (int o = 8; o > 0; o >>= 1) {
      m = fmaxf(m, __shfl_xor_sync(0xffffffffU, m, o));
    }
    const float scale = m > 0 ? m / 448.0f : 1.0f;
    unsigned char b[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      b[e] = __nv_cvt_float_to_fp8(to_f(v.v[e]) / scale, __NV_SATFINITE, __NV_E4M3);
    }
    uint2 packed;
    memcpy(&packed, b, sizeof packed);
    *reinterpret_cast<unsigned*>(&qs[cell.row][cell.col]) = packed.x;
    *reinterpret_cast<unsigned*>(&qs[cell.row][cell.col + 4]) = packed.y;
    if (in) {
      *reinterpret_cast<uint2*>(q + row * w + t.col0 + cell.col) = packed;
      if (cell.col == 0) {
        scales[row * (w / kCastGroup) + t.col0 / kCastGroup] = scale;
      }
    }
  }
}

// q^T[col][row0 ..]: 16 FP8 a store where the rows allow it, else byte by byte.
__device__ void store_transposed(const TileBytes* qs, fp8* qt, CastTile t, long long rows) {
  for (int c = static_cast<int>(threadIdx.x); c < kCastWriteChunks; c += kCastThreads) {
    const TileCell cell = cast_write_chunk(c);
    const long long row = t.row0 + cell.row;
    unsigned char b[16];
#pragma unroll
    for (int e = 0; e < 16; ++e) {
      b[e] = qs[cell.row + e][cell.col];
    }
    auto* dst = reinterpret_cast<unsigned char*>(qt + (t.col0 + cell.col) * rows + row);
    if (rows % 16 == 0 && row + 16 <= rows) {
      uint4 packed;
      memcpy(&packed, b, sizeof packed);
      *reinterpret_cast<uint4*>(dst) = packed;
    } else {
      for (int e = 0; e < 16 && row + e < rows; ++e) {
        dst[e] = b[e];
      }
    }
  }
}

__global__ void __launch_bounds__(kCastThreads)
    fp8_cast(const bf16* x, fp8* q, fp8* qt, float* scales, long long rows, int w) {
  __shared__ __align__(16) TileBytes qs[kCastTileRows];
  const int groups = w / kCastGroup;
  const long long tiles = (rows + kCastTileRows - 1) / kCastTileRows * groups;
  for (long long i = blockIdx.x; i < tiles; i += gridDim.x) {
    const CastTile t{(i / groups) * kCastTileRows, static_cast<int>(i % groups) * kCastGroup};
    cast_rows(x, q, scales, qs, t, rows, w);
    __syncthreads();
    store_transposed(qs, qt, t, rows);
    __syncthreads();
  }
}

void launch(const MemoryArgs& a) {
  const long long tiles = (a.rows + kCastTileRows - 1) / kCastTileRows * (a.width / kCastGroup);
  const long long resident = resident_blocks(reinterpret_cast<const void*>(fp8_cast), kCastThreads);
  fp8_cast<<<static_cast<unsigned>(tiles < resident ? tiles : resident), kCastThreads, 0,
             a.stream>>>(a.input<bf16>(0), a.output<fp8>(0), a.output<fp8>(1), a.output<float>(2),
                         a.rows, static_cast<int>(a.width));
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
                           .rows_multiple = kCastTileRows,
                           .launch = HOPSIM_MEMORY_LAUNCH(launch),
                           .check = check};

}  // namespace

extern const MemoryKernelRow kFp8CastKernel{
    .name = "fp8_cast", .width = 7168, .check_width = 256, .fwd = kPass, .bwd = same_kernel(kPass)};

}  // namespace hopsim::calib
