// Error checks for the CUDA runtime, cuBLAS and cuDNN: each failure throws CudaError with
// file:line, the call, and the library's error name and description.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include <cublas_api.h>
#include <cudnn_graph.h>

namespace hopsim::calib {

class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& message, std::string library, int code)
      : std::runtime_error(message), library_(std::move(library)), code_(code) {}

  const std::string& library() const { return library_; }

  int code() const { return code_; }

 private:
  std::string library_;
  int code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file,
                                    int line);

/// "cudnn status 3000 (CUDNN_STATUS_NOT_SUPPORTED): <last error message>"
std::string cudnn_status_text(cudnnStatus_t status);

}  // namespace hopsim::calib

#define HOPSIM_CUDA_CHECK(call)                                                  \
  do {                                                                           \
    const cudaError_t hopsim_err_ = (call);                                      \
    if (hopsim_err_ != cudaSuccess) {                                            \
      ::hopsim::calib::throw_cuda_error(hopsim_err_, #call, __FILE__, __LINE__); \
    }                                                                            \
  } while (false)

#define HOPSIM_CUBLAS_CHECK(call)                                                 \
  do {                                                                            \
    const cublasStatus_t hopsim_st_ = (call);                                     \
    if (hopsim_st_ != CUBLAS_STATUS_SUCCESS) {                                    \
      ::hopsim::calib::throw_cublas_error(hopsim_st_, #call, __FILE__, __LINE__); \
    }                                                                             \
  } while (false)

#define HOPSIM_CUDNN_CHECK(call)                                                 \
  do {                                                                           \
    const cudnnStatus_t hopsim_st_ = (call);                                     \
    if (hopsim_st_ != CUDNN_STATUS_SUCCESS) {                                    \
      ::hopsim::calib::throw_cudnn_error(hopsim_st_, #call, __FILE__, __LINE__); \
    }                                                                            \
  } while (false)
