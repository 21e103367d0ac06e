// CUDA-event timer for the measurement loop: events on one stream, L2 flushed by a memset.
#pragma once

#include <cuda_runtime_api.h>

#include "calibrate/backend/buffers.hpp"
#include "calibrate/core/measure.hpp"

namespace hopsim::calib {

inline constexpr std::size_t kFlushBytes = 256ULL << 20U;  // 256 MiB > any Hopper L2 (50–60 MB)

class CudaTimer final : public TimerBackend {
 public:
  explicit CudaTimer(cudaStream_t stream, std::size_t flush_bytes = kFlushBytes);
  ~CudaTimer() override;
  CudaTimer(const CudaTimer&) = delete;
  CudaTimer& operator=(const CudaTimer&) = delete;

  void flush() override;
  void start() override;
  void stop() override;
  double elapsed_us() override;

 private:
  cudaStream_t stream_;
  DeviceBuffer flush_buffer_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  unsigned char flush_value_ = 0;
};

}  // namespace hopsim::calib
