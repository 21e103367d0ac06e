// Creates the cuBLASLt matmul descriptor and layouts of an LtMatmulSpec, attribute by attribute,
// naming the first one cuBLASLt refuses. Header-only and free of the harness's other code, so
// diagnostics/fp8_probe.cpp builds with it under plain nvcc. Needs no device.
#pragma once

#include <cstdint>
#include <string>

#include <cublasLt.h>

#include "calibrate/core/lt_spec.hpp"

namespace hopsim::calib {

/// Whether these cuBLAS headers know blockwise FP8 scaling (cuBLAS 12.9 and later).
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120900
inline constexpr bool kLtBlockScaling = true;
#else
inline constexpr bool kLtBlockScaling = false;
#endif

struct LtDesc {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr;
  cublasLtMatrixLayout_t b = nullptr;
  cublasLtMatrixLayout_t c = nullptr;
  cublasLtMatrixLayout_t d = nullptr;
  /// The first call cuBLASLt refused ("" when all succeeded) and its status.
  std::string failed;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;

  LtDesc() = default;
  LtDesc(const LtDesc&) = delete;
  LtDesc& operator=(const LtDesc&) = delete;
  ~LtDesc() {
    if (d != c) {
      cublasLtMatrixLayoutDestroy(d);
    }
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(op);
  }

  bool ok() const { return failed.empty(); }

  /// Records `what` when `s` is the first failure; returns whether everything succeeded so far.
  bool step(cublasStatus_t s, const char* what) {
    if (failed.empty() && s != CUBLAS_STATUS_SUCCESS) {
      failed = what;
      status = s;
    }
    return failed.empty();
  }
};

inline cudaDataType_t lt_cuda_type(LtType t) {
  switch (t) {
    case LtType::Bf16:
      return CUDA_R_16BF;
    case LtType::Fp8E4m3:
      return CUDA_R_8F_E4M3;
    case LtType::F32:
      return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

/// The scale mode attribute's value; false when these headers do not know the mode.
inline bool lt_scale_mode_value(LtScaleMode mode, std::int32_t& value) {
  value = 0;  // CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120900
  if (mode == LtScaleMode::Vec128_32F) {
    value = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  } else if (mode == LtScaleMode::Blk128x128_32F) {
    value = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  }
  return true;
#else
  return mode == LtScaleMode::None || mode == LtScaleMode::Scalar32F;
#endif
}

template <typename T>
bool lt_set(LtDesc& d, cublasLtMatmulDescAttributes_t attr, const T& value, const char* name) {
  return d.step(cublasLtMatmulDescSetAttribute(d.op, attr, &value, sizeof value), name);
}

/// The scale modes of A and B (blockwise only: per tensor is the default).
inline bool lt_set_scale_modes(LtDesc& d, const LtMatmulSpec& s) {
  if (s.a.scale != LtScaleMode::Vec128_32F && s.b.scale != LtScaleMode::Blk128x128_32F) {
    return d.ok();
  }
  std::int32_t a_mode = 0;
  std::int32_t b_mode = 0;
  if (!lt_scale_mode_value(s.a.scale, a_mode) || !lt_scale_mode_value(s.b.scale, b_mode)) {
    return d.step(CUBLAS_STATUS_NOT_SUPPORTED,
                  "CUBLASLT_MATMUL_DESC_A/B_SCALE_MODE (blockwise FP8 needs cuBLAS 12.9 headers)");
  }
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120900
  lt_set(d, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, a_mode, "CUBLASLT_MATMUL_DESC_A_SCALE_MODE");
  lt_set(d, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, b_mode, "CUBLASLT_MATMUL_DESC_B_SCALE_MODE");
#endif
  return d.ok();
}

inline bool lt_layout(LtDesc& d, cublasLtMatrixLayout_t& out, const LtMatrix& m,
                      const char* name) {
  return d.step(cublasLtMatrixLayoutCreate(&out, lt_cuda_type(m.type),
                                           static_cast<std::uint64_t>(m.rows),
                                           static_cast<std::uint64_t>(m.cols), m.ld),
                name);
}

/// Builds `d` from `s`: the matmul descriptor (compute type, scale type, transposes, fast
/// accumulation, scale modes) and the four layouts (D shares C's when they are one buffer).
/// Scale pointers are set by lt_set_scale_pointers. Check d.ok() / d.failed.
inline void lt_create(LtDesc& d, const LtMatmulSpec& s) {
  const cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (!d.step(cublasLtMatmulDescCreate(&d.op, compute, lt_cuda_type(s.scale_type)),
              "cublasLtMatmulDescCreate(CUBLAS_COMPUTE_32F, CUDA_R_32F)")) {
    return;
  }
  const cublasOperation_t ta = s.transa ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = s.transb ? CUBLAS_OP_T : CUBLAS_OP_N;
  lt_set(d, CUBLASLT_MATMUL_DESC_TRANSA, ta, "CUBLASLT_MATMUL_DESC_TRANSA");
  lt_set(d, CUBLASLT_MATMUL_DESC_TRANSB, tb, "CUBLASLT_MATMUL_DESC_TRANSB");
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  lt_set(d, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, "CUBLASLT_MATMUL_DESC_EPILOGUE");
  if (s.fast_accum) {
    const std::int8_t on = 1;
    lt_set(d, CUBLASLT_MATMUL_DESC_FAST_ACCUM, on, "CUBLASLT_MATMUL_DESC_FAST_ACCUM");
  }
  lt_set_scale_modes(d, s);
  lt_layout(d, d.a, s.a, "cublasLtMatrixLayoutCreate(A)");
  lt_layout(d, d.b, s.b, "cublasLtMatrixLayoutCreate(B)");
  lt_layout(d, d.c, s.c, "cublasLtMatrixLayoutCreate(C)");
  if (s.c_is_d) {
    d.d = d.c;
  } else {
    lt_layout(d, d.d, s.d, "cublasLtMatrixLayoutCreate(D)");
  }
}

/// CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER: device pointers to the FP32 scales of cuBLAS's A and B.
inline bool lt_set_scale_pointers(LtDesc& d, const float* a_scale, const float* b_scale) {
  lt_set(d, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, a_scale, "CUBLASLT_MATMUL_DESC_A_SCALE_POINTER");
  lt_set(d, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, b_scale, "CUBLASLT_MATMUL_DESC_B_SCALE_POINTER");
  return d.ok();
}

}  // namespace hopsim::calib
