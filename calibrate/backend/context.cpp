// Creates and releases the streams, events and library handles of a run.
#include "calibrate/backend/context.hpp"

#include "calibrate/backend/cuda_check.hpp"
#include <cublas_v2.h>

namespace hopsim::calib {

GpuContext::GpuContext() {
  HOPSIM_CUDA_CHECK(cudaSetDevice(0));
  HOPSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  for (std::size_t i = 0; i < kSideStreams; ++i) {
    HOPSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&side_[i], cudaStreamNonBlocking));
    HOPSIM_CUDA_CHECK(cudaEventCreateWithFlags(&join_[i], cudaEventDisableTiming));
    lt_workspace_[i] = DeviceBuffer(kLtWorkspaceBytes);
  }
  HOPSIM_CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
  HOPSIM_CUBLAS_CHECK(cublasLtCreate(&lt_));
  HOPSIM_CUBLAS_CHECK(cublasCreate(&blas_));
  HOPSIM_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
  HOPSIM_CUDNN_CHECK(cudnnCreate(&cudnn_));
  HOPSIM_CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
}

GpuContext::~GpuContext() {
  cudaDeviceSynchronize();
  if (cudnn_ != nullptr) {
    cudnnDestroy(cudnn_);
  }
  if (blas_ != nullptr) {
    cublasDestroy(blas_);
  }
  if (lt_ != nullptr) {
    cublasLtDestroy(lt_);
  }
  for (std::size_t i = 0; i < kSideStreams; ++i) {
    cudaEventDestroy(join_[i]);
    cudaStreamDestroy(side_[i]);
  }
  cudaEventDestroy(fork_);
  cudaStreamDestroy(stream_);
}

}  // namespace hopsim::calib
