// What the harness asks cuBLASLt for, as a plain struct: every attribute of one matmul
// descriptor and its matrix layouts, in cuBLAS's column-major terms. The backend
// (backend/lt_gemm.cpp) creates the cuBLASLt descriptor from it attribute by attribute; the dry
// run prints it; diagnostics/fp8_probe.cpp checks it; and tests hold it to what the cuBLASLt
// documentation requires of FP8 matmuls on Hopper (cublasLtMatmul, "FP8" and "Tensor Core
// usage"; NVIDIA's LtFp8Matmul and LtBlk128x128Fp8Matmul samples):
//   - A transposed, B not ("TN");
//   - compute type CUBLAS_COMPUTE_32F, scale type CUDA_R_32F;
//   - A and B E4M3, each with a device pointer to its FP32 scale(s);
//   - D BF16 or FP32, C the same type as D (C FP8 only with an FP8 D and a D scale);
//   - leading dimensions multiples of 16 elements, every pointer 16-byte aligned;
//   - no epilogue beyond the default.
// Blockwise scaling (cuBLAS 12.9 and later: CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F for the
// activations, one FP32 scale per 1×128, and BLK128x128_32F for the weights) follows the
// LtBlk128x128Fp8Matmul sample: A the activations (VEC128), B the weights (BLK128x128), so D is
// the output transposed (N×M row-major); K a multiple of 128.
//
// No cuBLAS header here: the struct names the cuBLAS constants as text, so a plain build and
// the standalone probe read it too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/core/types.hpp"

namespace hopsim::calib {

/// What the GEMM writes: BF16 C, or FP32 C accumulated in place (C += A·Bᵀ, a weight gradient).
enum class GemmOutput { Bf16, Fp32Accumulate };

/// How FP8 inputs are scaled: per tensor (one FP32 scale each; Transformer Engine's delayed
/// and current scaling) or DeepSeek-V3 / DeepGEMM-style blocks (1×128 activations, 128×128
/// weights).
enum class Fp8Recipe { Tensor, Block128 };

/// cuBLASLt's names for the types, operations and scale modes the harness uses.
enum class LtType { Bf16, Fp8E4m3, F32 };
enum class LtScaleMode { None, Scalar32F, Vec128_32F, Blk128x128_32F };

/// One matrix layout: column-major rows × cols with leading dimension ld, and its scale.
struct LtMatrix {
  LtType type = LtType::Bf16;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t ld = 0;
  LtScaleMode scale = LtScaleMode::None;
};

/// A cuBLASLt matmul D = alpha·op(A)·op(B) + beta·C, as the harness builds it.
struct LtMatmulSpec {
  std::int64_t m = 0;  ///< cuBLAS's m, n, k: D is m × n, the reduction k
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool transa = true;  ///< CUBLASLT_MATMUL_DESC_TRANSA = CUBLAS_OP_T
  bool transb = false;
  std::string compute = "CUBLAS_COMPUTE_32F";
  LtType scale_type = LtType::F32;  ///< CUBLASLT_MATMUL_DESC_SCALE_TYPE (alpha, beta)
  LtMatrix a;
  LtMatrix b;
  LtMatrix c;
  LtMatrix d;
  bool c_is_d = true;          ///< C and D one buffer (beta 0: C unread)
  float beta = 0.0F;           ///< 1 for a weight gradient's accumulation
  bool fast_accum = false;     ///< CUBLASLT_MATMUL_DESC_FAST_ACCUM
  std::string epilogue = "CUBLASLT_EPILOGUE_DEFAULT";
  bool a_is_weights = true;    ///< cuBLAS's A holds the weights (else the activations)
  bool d_transposed = false;   ///< D holds the output transposed (N × M row-major)
  Fp8Recipe recipe = Fp8Recipe::Tensor;
  Dtype dtype = Dtype::Bf16;

  bool fp8() const { return dtype == Dtype::Fp8; }
};

/// The descriptor for row-major C[m, n] = A[m, k] · B[n, k]ᵀ (A activations, B weights).
LtMatmulSpec lt_matmul_spec(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                            GemmOutput output = GemmOutput::Bf16, bool fast_accum = false,
                            Fp8Recipe recipe = Fp8Recipe::Tensor);

/// FP32 scales a matrix of `spec` needs (1 per tensor; per 1×128 or 128×128 block).
std::int64_t lt_scale_count(const LtMatrix& matrix);

/// Pointer addresses to check against the alignment requirement (0: not used).
struct LtPointers {
  std::uintptr_t a = 0;
  std::uintptr_t b = 0;
  std::uintptr_t c = 0;
  std::uintptr_t d = 0;
  std::uintptr_t a_scale = 0;
  std::uintptr_t b_scale = 0;
};

/// Each documented FP8 requirement the descriptor (and, when given, the pointers) breaks, one
/// line each naming the attribute: empty when cuBLASLt's FP8 path should accept it. A BF16
/// descriptor is held to the alignment rules only.
std::vector<std::string> lt_requirement_failures(const LtMatmulSpec& spec,
                                                 const LtPointers* pointers = nullptr);

/// "CUDA_R_8F_E4M3", "CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F", ...
std::string lt_name(LtType type);
std::string lt_name(LtScaleMode mode);
/// "tensor" or "blk128".
std::string_view to_string(Fp8Recipe recipe);

/// The table's implementation name of a dense GEMM: "cublaslt", or "cublaslt_blk128".
std::string gemm_impl(Fp8Recipe recipe);
/// The recipe a dense GEMM table's impl names; CalibError for another impl.
Fp8Recipe gemm_recipe(std::string_view impl);

/// Every attribute, one per line (what the dry run prints and the probe logs).
std::string describe(const LtMatmulSpec& spec);

/// One line: what an FP8 table of `recipe` measured (the table file's method block).
std::string recipe_text(Fp8Recipe recipe);

}  // namespace hopsim::calib
