// One cuBLASLt GEMM in the harness's "TN" form: row-major C[M, N] = A[M, K] · B[N, K]ᵀ.
//
// A holds activations (tokens × features), B weights (out × in), C is BF16. The descriptor is
// core/lt_spec.hpp's LtMatmulSpec (the documented FP8 one: TN, CUBLAS_COMPUTE_32F, FP32 scale
// pointers for A and B in their own device buffers, BF16 or FP32 D with C of the same type),
// created by backend/lt_desc.hpp. Per tensor, cuBLAS's A is the weights: Cᵀ (N×M column-major)
// = op(W)·X. The blockwise FP8 recipe (1×128 activation and 128×128 weight scales) follows
// NVIDIA's sample instead: cuBLAS's A is the activations and C holds the output transposed.
// `fast_accum` turns on FP8 fast accumulation, as Transformer Engine does for forward GEMMs.
// A weight gradient (GemmOutput::Fp32Accumulate) writes FP32 C and adds to it (beta = 1): the
// main gradient Megatron and Transformer Engine accumulate into, M x N the weight, K the tokens.
// Before its first matmul it checks the descriptor and the pointers against the documented
// requirements (lt_requirement_failures) and throws naming each one broken.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "calibrate/backend/buffers.hpp"
#include "calibrate/core/lt_spec.hpp"
#include "calibrate/core/types.hpp"
#include <cublasLt.h>

namespace hopsim::calib {

/// Scratch memory for one cuBLASLt call (one per concurrently used stream).
struct LtWorkspace {
  void* data = nullptr;
  std::size_t bytes = 0;
};

class LtGemm {
 public:
  /// Creates the matmul and layout descriptors; needs no device.
  LtGemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k, bool fast_accum = false,
         GemmOutput output = GemmOutput::Bf16, Fp8Recipe recipe = Fp8Recipe::Tensor);
  explicit LtGemm(const LtMatmulSpec& spec);
  ~LtGemm();
  LtGemm(LtGemm&&) noexcept;
  LtGemm& operator=(LtGemm&&) noexcept;

  /// FP8 only: the dequantisation scales of the activations (A) and the weights (B), device
  /// floats (as many as lt_scale_count of their matrices).
  void set_scales(const float* a_scale, const float* b_scale);
  /// FP8 only: allocates both scales, each in its own (256-byte aligned) device buffer, all 1.
  void use_unit_scales();

  const LtMatmulSpec& spec() const;

  /// How many of cuBLASLt's heuristic choices are kept: the first that runs is used.
  static constexpr int kAlgoCandidates = 8;

  /// cuBLASLt's heuristic choices for `workspace_bytes`, best first; throws when there is none.
  void select_algo(cublasLtHandle_t handle, std::size_t workspace_bytes);
  bool has_algo() const;

  /// Enqueues C = A·Bᵀ (C += A·Bᵀ for Fp32Accumulate) on `stream` with the best heuristic choice
  /// that cuBLASLt accepts (the first call may drop refused ones); select_algo must have succeeded.
  void run(cublasLtHandle_t handle, cudaStream_t stream, const void* a, const void* b, void* c,
           LtWorkspace workspace) const;

  std::string describe() const;

 private:
  /// Throws naming every documented requirement the descriptor or the pointers break (once).
  void check_requirements(const void* a, const void* b, const void* c) const;

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace hopsim::calib
