// Everything a measurement needs from the device: streams, events, library handles, workspaces.
#pragma once

#include <array>
#include <cstddef>

#include <cuda_runtime_api.h>

#include "calibrate/backend/buffers.hpp"
#include "calibrate/backend/lt_gemm.hpp"
#include <cublasLt.h>
#include <cublas_api.h>
#include <cudnn_graph.h>

namespace hopsim::calib {

/// One per process; needs a device (check device_unavailable_reason() first).
class GpuContext {
 public:
  static constexpr std::size_t kSideStreams = 4;
  static constexpr std::size_t kLtWorkspaceBytes = 32ULL
                                                   << 20U;  // cuBLASLt on Hopper wants ≥ 32 MiB

  GpuContext();
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  cudaStream_t stream() const { return stream_; }

  cudaStream_t side_stream(std::size_t i) const { return side_[i]; }

  cudaEvent_t fork_event() const { return fork_; }

  cudaEvent_t join_event(std::size_t i) const { return join_[i]; }

  cublasLtHandle_t lt() const { return lt_; }

  cublasHandle_t blas() const { return blas_; }

  cudnnHandle_t cudnn() const { return cudnn_; }

  /// Workspace i (0 for the main stream, 0..kSideStreams−1 for side streams).
  LtWorkspace lt_workspace(std::size_t i) const {
    return {lt_workspace_[i].get(), kLtWorkspaceBytes};
  }

 private:
  cudaStream_t stream_ = nullptr;
  std::array<cudaStream_t, kSideStreams> side_{};
  cudaEvent_t fork_ = nullptr;
  std::array<cudaEvent_t, kSideStreams> join_{};
  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  std::array<DeviceBuffer, kSideStreams> lt_workspace_;
};

}  // namespace hopsim::calib
