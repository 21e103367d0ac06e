// Memory-bound kernels (op "memory"): the classes the simulator prices by the bytes they move,
// those bytes per row in the simulator's own closed forms (workloads/costs/layer_kernels.hpp),
// and the shape the harness times for a table's `bytes` axis.
//
// Per row of `width` elements (BF16 activations; FP8 copies 1 byte):
//   norm               fwd 4w + 4 (x in, y out, 1/rms in FP32)    bwd 6w + 4
//   residual           6w (two in, one out), both passes
//   rotary             4w (queries and keys read and written), both passes
//   swiglu             fwd 6w (gate and up in, w out)             bwd 10w
//   fp8_cast           4w (BF16 in, FP8 row-major and transposed copies out), both passes
//   router             fwd 8w + 64 (FP32 scores of w experts in and out, top-8 ids and weights)
//                      bwd 12w
//   permute            fwd 2w (FP8 rows gathered)                  bwd 4w (BF16 rows)
//   attention_bwd_prep bwd only, w heads of d = 128: w (4·128 + 4 + 6·128) = 1284w
//   cross_entropy      fwd 6w + 8 (w BF16 logits read twice, the gradient written, the target
//                      id in, the loss out)                       bwd 4w + 4 (scaled by dloss)
#pragma once

#include <cstdint>
#include <string_view>

#include "calibrate/core/types.hpp"

namespace hopsim::calib {

enum class MemoryKernel {
  Norm,
  Residual,
  Rotary,
  SwiGlu,
  Fp8Cast,
  Router,
  Permute,
  AttnBwdPrep,
  CrossEntropy,
};

/// Its table spelling: "norm", "fp8_cast", "attention_bwd_prep", ... (the simulator's class names).
std::string_view to_string(MemoryKernel kernel);
/// Throws CalibError for any other spelling.
MemoryKernel parse_memory_kernel(std::string_view s);

/// The row width the harness times each kernel at: DeepSeek-V3's hidden 7168 (norm, residual,
/// permute, fp8_cast), its expert FFN 2048 (swiglu), 128 heads x 64 rotated dims (rotary), 256
/// experts (router), 128 heads (attention_bwd_prep), Llama 3's vocabulary over TP 8, 16,032
/// logits (cross_entropy).
std::int64_t memory_width(MemoryKernel kernel);

/// Bytes one row of `width` moves in `pass` (the table above); 0 where the pass has no kernel.
double memory_row_bytes(MemoryKernel kernel, Pass pass, std::int64_t width);

/// The rows to time so that the kernel moves about `bytes` (at least one row), at its width.
std::int64_t memory_rows(MemoryKernel kernel, Pass pass, double bytes);

}  // namespace hopsim::calib
