// The memory-bound kernels the harness times, one row each (memory/<kernel>.cu), in the order
// the grids list their tables.
#include <array>

#include "calibrate/memory/memory_kernel.hpp"

namespace hopsim::calib {

extern const MemoryKernelRow kNormKernel;
extern const MemoryKernelRow kResidualKernel;
extern const MemoryKernelRow kRotaryKernel;
extern const MemoryKernelRow kSwiGluKernel;
extern const MemoryKernelRow kFp8CastKernel;
extern const MemoryKernelRow kRouterKernel;
extern const MemoryKernelRow kPermuteKernel;
extern const MemoryKernelRow kAttnBwdPrepKernel;
extern const MemoryKernelRow kCrossEntropyKernel;

std::span<const MemoryKernelRow* const> memory_kernel_rows() {
  static constexpr std::array kRows{&kNormKernel,    &kResidualKernel,    &kRotaryKernel,
                                    &kSwiGluKernel,  &kFp8CastKernel,     &kRouterKernel,
                                    &kPermuteKernel, &kAttnBwdPrepKernel, &kCrossEntropyKernel};
  return kRows;
}

}  // namespace hopsim::calib
