// One memory-bound kernel (a row of memory/memory_kernel.hpp) at `rows` rows of a width: device
// buffers as the row declares them, inputs filled (at random, or with the ids the row names),
// outputs poisoned, and its launch.
#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/backend/buffers.hpp"
#include "calibrate/backend/context.hpp"
#include "calibrate/memory/memory_kernel.hpp"

namespace hopsim::calib {

class MemoryRunner {
 public:
  /// Throws CalibError for a kernel without that pass or a width it cannot run.
  MemoryRunner(GpuContext& ctx, const MemoryKernelRow& kernel, Pass pass, std::int64_t rows,
               std::int64_t width);

  void run() const;

  /// The buffers read back (waits for the device), for the pass's check.
  MemoryReadback readback() const;

 private:
  const MemoryPass& pass_;
  MemoryArgs args_;
  std::vector<DeviceBuffer> in_;
  std::vector<DeviceBuffer> out_;
};

}  // namespace hopsim::calib
