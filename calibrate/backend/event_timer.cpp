// Events around each rep; the flush memset is enqueued before the start event.
#include "calibrate/backend/event_timer.hpp"

#include "calibrate/backend/cuda_check.hpp"

namespace hopsim::calib {

CudaTimer::CudaTimer(cudaStream_t stream, std::size_t flush_bytes)
    : stream_(stream), flush_buffer_(flush_bytes) {
  HOPSIM_CUDA_CHECK(cudaEventCreate(&start_));
  HOPSIM_CUDA_CHECK(cudaEventCreate(&stop_));
}

CudaTimer::~CudaTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void CudaTimer::flush() {
  // A different byte each time, so no layer can treat the memset as a no-op.
  ++flush_value_;
  HOPSIM_CUDA_CHECK(
      cudaMemsetAsync(flush_buffer_.get(), flush_value_, flush_buffer_.bytes(), stream_));
}

void CudaTimer::start() {
  HOPSIM_CUDA_CHECK(cudaEventRecord(start_, stream_));
}

void CudaTimer::stop() {
  HOPSIM_CUDA_CHECK(cudaEventRecord(stop_, stream_));
}

double CudaTimer::elapsed_us() {
  HOPSIM_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0.0F;
  HOPSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms) * 1000.0;
}

}  // namespace hopsim::calib
