// The cuBLASLt descriptor as a plain struct, the documented FP8 requirements, and its text.
// Plain C++ (no fmt): diagnostics/fp8_probe.cpp compiles it with nvcc alone.
#include "calibrate/core/lt_spec.hpp"

#include <string_view>

namespace hopsim::calib {
namespace {

std::int64_t elem_size(LtType t) {
  switch (t) {
    case LtType::Bf16:
      return 2;
    case LtType::Fp8E4m3:
      return 1;
    case LtType::F32:
      return 4;
  }
  return 1;
}

std::int64_t blocks(std::int64_t extent) {
  return (extent + 127) / 128;
}

LtMatrix matrix(LtType type, std::int64_t rows, std::int64_t cols, LtScaleMode scale) {
  return {type, rows, cols, rows, scale};
}

std::string text(std::int64_t v) {
  return std::to_string(v);
}

void require(std::vector<std::string>& out, bool ok, const std::string& what) {
  if (!ok) {
    out.push_back(what);
  }
}

// The leading dimension and the pointer alignment of one matrix.
void check_matrix(std::vector<std::string>& out, const char* name, const LtMatrix& m,
                  std::uintptr_t pointer) {
  require(out, m.ld * elem_size(m.type) % 16 == 0,
          std::string(name) + " leading dimension " + text(m.ld) + " x " +
              text(elem_size(m.type)) + " B is not a multiple of 16 bytes");
  require(out, pointer % 16 == 0,
          std::string(name) + " pointer is not 16-byte aligned (" +
              std::to_string(pointer % 16) + " B past)");
}

void check_scales(std::vector<std::string>& out, const LtMatmulSpec& s) {
  require(out, s.a.scale != LtScaleMode::None,
          "CUBLASLT_MATMUL_DESC_A_SCALE_POINTER: FP8 A needs its FP32 scale (device pointer)");
  require(out, s.b.scale != LtScaleMode::None,
          "CUBLASLT_MATMUL_DESC_B_SCALE_POINTER: FP8 B needs its FP32 scale (device pointer)");
  if (s.recipe == Fp8Recipe::Block128) {
    require(out, s.a.scale == LtScaleMode::Vec128_32F,
            "CUBLASLT_MATMUL_DESC_A_SCALE_MODE: the blockwise recipe scales A (activations) by "
            "VEC128_32F");
    require(out, s.b.scale == LtScaleMode::Blk128x128_32F,
            "CUBLASLT_MATMUL_DESC_B_SCALE_MODE: the blockwise recipe scales B (weights) by "
            "BLK128x128_32F");
    require(out, s.k % 128 == 0, "k " + text(s.k) + " is not a multiple of 128 (block scales)");
    require(out, !s.fast_accum,
            "CUBLASLT_MATMUL_DESC_FAST_ACCUM: the blockwise recipe accumulates in FP32 (as the "
            "LtBlk128x128Fp8Matmul sample)");
  } else {
    require(out, s.a.scale == LtScaleMode::Scalar32F && s.b.scale == LtScaleMode::Scalar32F,
            "CUBLASLT_MATMUL_DESC_A/B_SCALE_MODE: per-tensor scaling is SCALAR_32F");
  }
}

void check_fp8(std::vector<std::string>& out, const LtMatmulSpec& s) {
  require(out, s.transa && !s.transb,
          "CUBLASLT_MATMUL_DESC_TRANSA/TRANSB: FP8 needs A transposed and B not (TN)");
  require(out, s.compute == "CUBLAS_COMPUTE_32F",
          "compute type " + s.compute + ": FP8 needs CUBLAS_COMPUTE_32F");
  require(out, s.scale_type == LtType::F32,
          "CUBLASLT_MATMUL_DESC_SCALE_TYPE " + lt_name(s.scale_type) + ": FP8 needs CUDA_R_32F");
  require(out, s.a.type == LtType::Fp8E4m3 && s.b.type == LtType::Fp8E4m3,
          "A/B type: the harness's FP8 GEMMs are E4M3 x E4M3");
  require(out, s.d.type == LtType::Bf16 || s.d.type == LtType::F32,
          "D type " + lt_name(s.d.type) + ": BF16 or FP32 (an FP8 D needs a D scale)");
  require(out, s.c.type == s.d.type,
          "C type " + lt_name(s.c.type) + " differs from D type " + lt_name(s.d.type));
  require(out, s.k % 16 == 0, "k " + text(s.k) + " is not a multiple of 16");
  require(out, s.epilogue == "CUBLASLT_EPILOGUE_DEFAULT",
          "CUBLASLT_MATMUL_DESC_EPILOGUE " + s.epilogue + ": FP8 here takes the default only");
  require(out, !s.fast_accum || s.d.type == LtType::Bf16,
          "CUBLASLT_MATMUL_DESC_FAST_ACCUM: only forward GEMMs (BF16 out) use it");
  check_scales(out, s);
}

}  // namespace

LtMatmulSpec lt_matmul_spec(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                            GemmOutput output, bool fast_accum, Fp8Recipe recipe) {
  LtMatmulSpec s;
  s.dtype = dtype;
  s.recipe = dtype == Dtype::Fp8 ? recipe : Fp8Recipe::Tensor;
  const bool fp8 = dtype == Dtype::Fp8;
  const LtType in = fp8 ? LtType::Fp8E4m3 : LtType::Bf16;
  const LtType out = output == GemmOutput::Fp32Accumulate ? LtType::F32 : LtType::Bf16;
  const bool block = fp8 && s.recipe == Fp8Recipe::Block128;
  // Per tensor: cuBLAS's A = the weights (K×N column-major, transposed), B = the activations,
  // D = Cᵀ column-major = C row-major. Blockwise, as NVIDIA's sample: A = the activations
  // (VEC128), B = the weights (BLK128x128), D = the output transposed.
  s.a_is_weights = !block;
  s.d_transposed = block;
  s.m = block ? m : n;
  s.n = block ? n : m;
  s.k = k;
  const LtScaleMode a_scale = !fp8 ? LtScaleMode::None
                              : block ? LtScaleMode::Vec128_32F
                                      : LtScaleMode::Scalar32F;
  const LtScaleMode b_scale = !fp8 ? LtScaleMode::None
                              : block ? LtScaleMode::Blk128x128_32F
                                      : LtScaleMode::Scalar32F;
  s.a = matrix(in, k, s.m, a_scale);
  s.b = matrix(in, k, s.n, b_scale);
  s.c = matrix(out, s.m, s.n, LtScaleMode::None);
  s.d = s.c;
  s.beta = output == GemmOutput::Fp32Accumulate ? 1.0F : 0.0F;
  // Fast accumulation is the per-tensor recipe's (Transformer Engine's forward GEMMs); the
  // blockwise sample accumulates in FP32 throughout, and so does DeepGEMM (promoted every 128).
  s.fast_accum = fp8 && fast_accum && !block;
  return s;
}

std::int64_t lt_scale_count(const LtMatrix& matrix) {
  // rows = K (the reduction, innermost), cols = the outer extent.
  switch (matrix.scale) {
    case LtScaleMode::None:
      return 0;
    case LtScaleMode::Scalar32F:
      return 1;
    case LtScaleMode::Vec128_32F:
      return blocks(matrix.rows) * matrix.cols;
    case LtScaleMode::Blk128x128_32F:
      return blocks(matrix.rows) * blocks(matrix.cols);
  }
  return 0;
}

std::vector<std::string> lt_requirement_failures(const LtMatmulSpec& spec,
                                                 const LtPointers* pointers) {
  std::vector<std::string> out;
  if (spec.fp8()) {
    check_fp8(out, spec);
  }
  const LtPointers none{};
  const LtPointers& p = pointers != nullptr ? *pointers : none;
  check_matrix(out, "A", spec.a, p.a);
  check_matrix(out, "B", spec.b, p.b);
  check_matrix(out, "C", spec.c, p.c);
  check_matrix(out, "D", spec.d, p.d);
  require(out, p.a_scale % 16 == 0, "A scale pointer is not 16-byte aligned");
  require(out, p.b_scale % 16 == 0, "B scale pointer is not 16-byte aligned");
  require(out, pointers == nullptr || !spec.fp8() || (p.a_scale != 0 && p.b_scale != 0),
          "an FP8 scale pointer is null");
  return out;
}

std::string lt_name(LtType type) {
  switch (type) {
    case LtType::Bf16:
      return "CUDA_R_16BF";
    case LtType::Fp8E4m3:
      return "CUDA_R_8F_E4M3";
    case LtType::F32:
      return "CUDA_R_32F";
  }
  return "?";
}

std::string lt_name(LtScaleMode mode) {
  switch (mode) {
    case LtScaleMode::None:
      return "none";
    case LtScaleMode::Scalar32F:
      return "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F";
    case LtScaleMode::Vec128_32F:
      return "CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F";
    case LtScaleMode::Blk128x128_32F:
      return "CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F";
  }
  return "?";
}

std::string_view to_string(Fp8Recipe recipe) {
  return recipe == Fp8Recipe::Block128 ? "blk128" : "tensor";
}

std::string gemm_impl(Fp8Recipe recipe) {
  return recipe == Fp8Recipe::Block128 ? "cublaslt_blk128" : "cublaslt";
}

Fp8Recipe gemm_recipe(std::string_view impl) {
  if (impl == "cublaslt") {
    return Fp8Recipe::Tensor;
  }
  if (impl == "cublaslt_blk128") {
    return Fp8Recipe::Block128;
  }
  throw CalibError("unknown dense GEMM impl \"" + std::string(impl) +
                   "\" (expected cublaslt or cublaslt_blk128)");
}

std::string describe(const LtMatmulSpec& s) {
  auto layout = [](const char* name, const LtMatrix& x) {
    std::string line = std::string("  ") + name + ": " + lt_name(x.type) + " " + text(x.rows) +
                       " x " + text(x.cols) + " column-major, ld " + text(x.ld);
    if (x.scale != LtScaleMode::None) {
      line += ", scale " + lt_name(x.scale) + " (" + text(lt_scale_count(x)) +
              " FP32, own 256-byte aligned device buffer)";
    }
    return line + "\n";
  };
  std::string out = "cublasLtMatmul m=" + text(s.m) + " n=" + text(s.n) + " k=" + text(s.k) +
                    ", " + std::string(s.a_is_weights ? "A = weights" : "A = activations") +
                    (s.d_transposed ? ", D = the output transposed" : "") + "\n";
  out += "  compute " + s.compute + ", scale type " + lt_name(s.scale_type) + ", TRANSA " +
         (s.transa ? "CUBLAS_OP_T" : "CUBLAS_OP_N") + ", TRANSB " +
         (s.transb ? "CUBLAS_OP_T" : "CUBLAS_OP_N") + ", epilogue " + s.epilogue +
         ", fast accumulation " + (s.fast_accum ? "on" : "off") + "\n";
  out += layout("A", s.a) + layout("B", s.b) + layout("C", s.c) + layout("D", s.d);
  out += std::string("  C ") + (s.c_is_d ? "is D's buffer" : "its own buffer") +
         ", alpha 1, beta " + (s.beta == 0.0F ? "0" : "1") + "\n";
  return out;
}

std::string recipe_text(Fp8Recipe recipe) {
  if (recipe == Fp8Recipe::Block128) {
    return "FP8 E4M3 x E4M3 -> BF16, FP32 scales per 1x128 of the activations (VEC128_32F) and "
           "per 128x128 of the weights (BLK128x128_32F), DeepSeek-V3/DeepGEMM style, TN, FP32 "
           "accumulation";
  }
  return "FP8 E4M3 x E4M3 -> BF16 (FP32 for weight gradients), one FP32 scale per tensor "
         "(SCALAR_32F), TN, fast accumulation in forward GEMMs";
}

}  // namespace hopsim::calib
