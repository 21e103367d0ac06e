// One memory-bound kernel at `rows` rows of its width: device buffers filled at random (the
// permute's row ids a seeded shuffle), and its launch (memory_kernels.hpp lists the buffers).
#pragma once

#include <cstdint>
#include <vector>

#include "calibrate/backend/buffers.hpp"
#include "calibrate/backend/context.hpp"
#include "calibrate/backend/memory_kernels.hpp"

namespace hopsim::calib {

class MemoryRunner {
 public:
  /// Throws CalibError for a kernel without that pass or a width it cannot run.
  MemoryRunner(GpuContext& ctx, MemoryKernel kernel, Pass pass, std::int64_t rows,
               std::int64_t width);

  void run() const;

  const DeviceBuffer& in(std::size_t i) const { return in_.at(i); }
  const DeviceBuffer& out(std::size_t i) const { return out_.at(i); }
  /// The permute's row ids or the cross-entropy's targets (host copy).
  const std::vector<std::int32_t>& ids() const { return ids_; }

 private:
  GpuContext& ctx_;
  MemoryLaunch launch_;
  std::vector<DeviceBuffer> in_;
  std::vector<DeviceBuffer> out_;
  std::vector<std::int32_t> ids_;
};

}  // namespace hopsim::calib
