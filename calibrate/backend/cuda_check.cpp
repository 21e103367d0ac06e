// Formats CUDA, cuBLAS and cuDNN failures into exceptions.
#include "calibrate/backend/cuda_check.hpp"

#include <array>

#include <fmt/format.h>

#include <cublasLt.h>

namespace hopsim::calib {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw CudaError(fmt::format("{}:{}: {} failed: {} ({})", file, line, call, cudaGetErrorName(err),
                              cudaGetErrorString(err)),
                  "cuda", static_cast<int>(err));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw CudaError(fmt::format("{}:{}: {} failed: {} ({})", file, line, call,
                              cublasLtGetStatusName(status), cublasLtGetStatusString(status)),
                  "cublas", static_cast<int>(status));
}

std::string cudnn_status_text(cudnnStatus_t status) {
  std::array<char, 1024> last{};
  cudnnGetLastErrorString(last.data(), last.size());
  std::string text = fmt::format("{} ({})", cudnnGetErrorString(status), static_cast<int>(status));
  if (last[0] != '\0') {
    text += fmt::format(": {}", last.data());
  }
  return text;
}

void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
  throw CudaError(fmt::format("{}:{}: {} failed: {}", file, line, call, cudnn_status_text(status)),
                  "cudnn", static_cast<int>(status));
}

}  // namespace hopsim::calib
