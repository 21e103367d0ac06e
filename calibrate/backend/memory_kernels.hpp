// The memory-bound kernels the harness times (op "memory"): plain CUDA kernels of the classes
// the simulator prices by bytes (calibrate/core/memory_shapes.hpp), launched on raw device
// pointers. Buffers per kernel and pass, `rows` r of `width` w (BF16 unless said):
//   norm      fwd  in x[r w], weight[w]                  out y[r w], rstd[r] (FP32)
//             bwd  in x[r w], dy[r w], weight[w], rstd[r] out dx[r w]
//   residual       in a[r w], b[r w]                      out c[r w]
//   rotary         in x[r w] (w/64 heads of 64 rotated dims, angle by row; bwd rotates back)
//                                                         out y[r w]
//   swiglu    fwd  in gate|up[r 2w]                       out y[r w]
//             bwd  in gate|up[r 2w], dy[r w]              out dgate|dup[r 2w]
//   fp8_cast       in x[r w]                              out q[r w], q^T[w r] (FP8 E4M3),
//                                                             scales[r w/128] (FP32, per 1x128)
//   router    fwd  in logits[r w] (FP32)                  out probs[r w], top-8 ids[r 8]
//                                                             (int32), weights[r 8] (FP32)
//             bwd  in probs[r w], dprobs[r w] (FP32)      out dlogits[r w] (FP32)
//   permute        in rows[r w] (fwd FP8, bwd BF16), ids[r] (int32)   out rows[ids][r w]
//   attention_bwd_prep (bwd) w heads of 128: in O, dO[r w 128], dQ accumulator[r w 128] (FP32)
//                                            out delta[r w] (FP32), dQ[r w 128]
//   cross_entropy fwd in logits[r w], targets[r] (int32)  out dlogits[r w], loss[r] (FP32)
//                 bwd in dlogits[r w], dloss[r] (FP32)    out dlogits scaled[r w]
#pragma once

#include <array>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "calibrate/core/memory_shapes.hpp"

namespace hopsim::calib {

struct MemoryLaunch {
  MemoryKernel kernel = MemoryKernel::Norm;
  Pass pass = Pass::Fwd;
  std::int64_t rows = 0;
  std::int64_t width = 0;
  std::array<const void*, 4> in{};
  std::array<void*, 3> out{};
};

/// Queues the kernel on `stream`; throws CalibError (via HOPSIM_CUDA_CHECK) on a launch error.
void launch_memory_kernel(const MemoryLaunch& launch, cudaStream_t stream);

}  // namespace hopsim::calib
