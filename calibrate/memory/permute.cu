// permute: rows of DeepSeek-V3's hidden 7168 gathered into the grouped GEMMs' order, 16 bytes at
// a time: FP8 rows as dispatched (fwd), BF16 rows (unpermute and the backwards).
//   fwd  in rows[r w] (FP8), ids[r] (int32)   out rows[ids][r w] (FP8)   2w a row
//   bwd  in rows[r w] (BF16), ids[r] (int32)  out rows[ids][r w] (BF16)  4w a row
// The row ids (4 bytes a row) are left out by the closed form.
#include <cstddef>

#include "calibrate/memory/row_file.hpp"

namespace hopsim::calib {
namespace {

constexpr std::int64_t kVectorBytes = 16;

#ifdef __CUDACC__
// Row `row` of the output is row ids[row] of the input.
__global__ void gather_rows(const uint4* in, const int* ids, uint4* out, int vecs_per_row) {
  const long long row = blockIdx.x;
  const long long src = ids[row];
  for (int i = threadIdx.x; i < vecs_per_row; i += blockDim.x) {
    out[row * vecs_per_row + i] = in[src * vecs_per_row + i];
  }
}

template <int kElemBytes>
void launch(const MemoryArgs& a) {
  gather_rows<<<row_blocks(a.rows), kThreads, 0, a.stream>>>(
      a.input<uint4>(0), a.input<int>(1), a.output<uint4>(0),
      static_cast<int>(a.width * kElemBytes / kVectorBytes));
}
#endif

bool check(const MemoryReadback& k, std::string& detail) {
  const std::size_t w = as_size(k.width);
  const std::vector<double> rows = k.in(0);
  const std::vector<double> ids = k.in(1);
  std::vector<double> want;
  for (const double id : ids) {
    const auto src = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(id) * w);
    want.insert(want.end(), rows.begin() + src,
                rows.begin() + src + static_cast<std::ptrdiff_t>(w));
  }
  return judge("rows", k.out(0), want, 0.0, detail);
}

constexpr MemoryBuffer kIds{
    .name = "ids", .elem = Elem::I32, .count = per_row, .counted = false, .fill = Fill::RowShuffle};
constexpr MemoryBuffer kFwdIn[] = {{.name = "rows", .elem = Elem::Fp8E4m3, .count = per_element},
                                   kIds};
constexpr MemoryBuffer kFwdOut[] = {
    {.name = "rows[ids]", .elem = Elem::Fp8E4m3, .count = per_element}};
constexpr MemoryBuffer kBwdIn[] = {{.name = "rows", .count = per_element}, kIds};
constexpr MemoryBuffer kBwdOut[] = {{.name = "rows[ids]", .count = per_element}};

// Rows of 1-byte (fwd) or 2-byte (bwd) elements, read and written: 2 x that a row element.
template <int kElemBytes>
constexpr MemoryPass pass(std::span<const MemoryBuffer> in, std::span<const MemoryBuffer> out) {
  return {.in = in,
          .out = out,
          .bytes = {.per_element = 2.0 * kElemBytes},
          .width_multiple = kVectorBytes / kElemBytes,
          .launch = HOPSIM_MEMORY_LAUNCH(launch<kElemBytes>),
          .check = check};
}

}  // namespace

extern const MemoryKernelRow kPermuteKernel{.name = "permute",
                                            .width = 7168,
                                            .check_width = 512,
                                            .fwd = pass<1>(kFwdIn, kFwdOut),
                                            .bwd = pass<2>(kBwdIn, kBwdOut)};

}  // namespace hopsim::calib
