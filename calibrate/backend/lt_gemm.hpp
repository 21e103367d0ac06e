// One cuBLASLt GEMM in the harness's "TN" form: row-major C[M, N] = A[M, K] · B[N, K]ᵀ.
//
// A holds activations (tokens × features), B weights (out × in), C is BF16. In cuBLAS's
// column-major terms this is Cᵀ (N×M) = op(B)·A with op = transpose on the first operand —
// the "TN" layout that FP8 GEMMs on Hopper require. FP8 uses E4M3 for A and B with per-tensor
// FP32 scales (device pointers), BF16 output, FP32 accumulation; `fast_accum` turns on cuBLASLt's
// FP8 fast accumulation, as Transformer Engine does for forward GEMMs (not for gradients).
// A weight gradient (GemmOutput::Fp32Accumulate) writes FP32 C and adds to it (beta = 1): the
// main gradient Megatron and Transformer Engine accumulate into, M x N the weight, K the tokens.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "calibrate/core/types.hpp"
#include <cublasLt.h>

namespace hopsim::calib {

/// Scratch memory for one cuBLASLt call (one per concurrently used stream).
/// What the GEMM writes: BF16 C, or FP32 C accumulated in place (C += A·Bᵀ).
enum class GemmOutput { Bf16, Fp32Accumulate };

struct LtWorkspace {
  void* data = nullptr;
  std::size_t bytes = 0;
};

class LtGemm {
 public:
  /// Creates the matmul and layout descriptors; needs no device.
  LtGemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k, bool fast_accum = false,
         GemmOutput output = GemmOutput::Bf16);
  ~LtGemm();
  LtGemm(LtGemm&&) noexcept;
  LtGemm& operator=(LtGemm&&) noexcept;

  /// FP8 only: per-tensor dequantisation scales of A and B (device floats).
  void set_scales(const float* a_scale, const float* b_scale);

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
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace hopsim::calib
