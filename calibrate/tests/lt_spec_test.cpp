// The cuBLASLt descriptor the harness builds, held to cuBLASLt's documented FP8 requirements
// (core/lt_spec.hpp): TN, CUBLAS_COMPUTE_32F with CUDA_R_32F scales, E4M3 inputs with FP32 scale
// pointers, BF16 or FP32 D with C of D's type, leading dimensions of 16-byte multiples, aligned
// pointers, the default epilogue; blockwise FP8 as NVIDIA's LtBlk128x128Fp8Matmul sample.
#include "calibrate/core/lt_spec.hpp"

#include <string>

#include <doctest/doctest.h>

#include "calibrate/core/grid.hpp"

namespace hopsim::calib {
namespace {

bool mentions(const std::vector<std::string>& failures, const std::string& what) {
  for (const std::string& f : failures) {
    if (f.find(what) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("FP8 per-tensor descriptor: the documented attributes") {
  const LtMatmulSpec s = lt_matmul_spec(Dtype::Fp8, 128, 4096, 7168, GemmOutput::Bf16, true);
  CHECK(s.transa);
  CHECK_FALSE(s.transb);
  CHECK(s.compute == "CUBLAS_COMPUTE_32F");
  CHECK(s.scale_type == LtType::F32);
  CHECK(s.a.type == LtType::Fp8E4m3);
  CHECK(s.b.type == LtType::Fp8E4m3);
  CHECK(s.a.scale == LtScaleMode::Scalar32F);
  CHECK(s.b.scale == LtScaleMode::Scalar32F);
  CHECK(s.d.type == LtType::Bf16);
  CHECK(s.c.type == s.d.type);
  CHECK(s.epilogue == "CUBLASLT_EPILOGUE_DEFAULT");
  CHECK(s.fast_accum);
  // cuBLAS's A = the weights (K x N, transposed), B = the activations (K x M), D = N x M.
  CHECK(s.a_is_weights);
  CHECK(s.m == 4096);
  CHECK(s.n == 128);
  CHECK(s.k == 7168);
  CHECK(s.a.rows == 7168);
  CHECK(s.a.ld == 7168);
  CHECK(s.b.cols == 128);
  CHECK(s.d.rows == 4096);
  CHECK(s.d.ld == 4096);
  CHECK(lt_scale_count(s.a) == 1);
  CHECK(lt_requirement_failures(s).empty());
}

TEST_CASE("FP8 weight gradient: FP32 C and D, accumulated, no fast accumulation") {
  const LtMatmulSpec s =
      lt_matmul_spec(Dtype::Fp8, 4096, 7168, 4096, GemmOutput::Fp32Accumulate, false);
  CHECK(s.d.type == LtType::F32);
  CHECK(s.c.type == LtType::F32);
  CHECK(s.beta == 1.0F);
  CHECK_FALSE(s.fast_accum);
  CHECK(lt_requirement_failures(s).empty());
}

TEST_CASE("FP8 blockwise descriptor: as NVIDIA's LtBlk128x128Fp8Matmul sample") {
  const LtMatmulSpec s = lt_matmul_spec(Dtype::Fp8, 128, 4096, 7168, GemmOutput::Bf16, true,
                                        Fp8Recipe::Block128);
  CHECK(s.transa);
  CHECK_FALSE(s.transb);
  CHECK_FALSE(s.a_is_weights);  // A = the activations, 1x128 scales
  CHECK_FALSE(s.fast_accum);    // asked for, but the blockwise recipe accumulates in FP32
  CHECK(s.d_transposed);
  CHECK(s.a.scale == LtScaleMode::Vec128_32F);
  CHECK(s.b.scale == LtScaleMode::Blk128x128_32F);
  CHECK(s.m == 128);
  CHECK(s.n == 4096);
  CHECK(lt_scale_count(s.a) == 7168 / 128 * 128);
  CHECK(lt_scale_count(s.b) == 7168 / 128 * (4096 / 128));
  CHECK(lt_requirement_failures(s).empty());
  CHECK(gemm_impl(Fp8Recipe::Block128) == "cublaslt_blk128");
  CHECK(gemm_recipe("cublaslt_blk128") == Fp8Recipe::Block128);
  CHECK(gemm_recipe("cublaslt") == Fp8Recipe::Tensor);
  CHECK_THROWS_AS(gemm_recipe("cutlass"), CalibError);
}

TEST_CASE("FP8 requirements: each broken one is named") {
  const LtMatmulSpec good = lt_matmul_spec(Dtype::Fp8, 128, 4096, 7168, GemmOutput::Bf16, true);
  LtMatmulSpec s = good;
  s.transa = false;  // NN
  CHECK(mentions(lt_requirement_failures(s), "TRANSA/TRANSB"));
  s = good;
  s.compute = "CUBLAS_COMPUTE_32F_FAST_TF32";
  CHECK(mentions(lt_requirement_failures(s), "CUBLAS_COMPUTE_32F"));
  s = good;
  s.scale_type = LtType::Bf16;
  CHECK(mentions(lt_requirement_failures(s), "SCALE_TYPE"));
  s = good;
  s.a.scale = LtScaleMode::None;
  CHECK(mentions(lt_requirement_failures(s), "A_SCALE_POINTER"));
  s = good;
  s.d.type = LtType::Fp8E4m3;
  CHECK(mentions(lt_requirement_failures(s), "D type"));
  s = good;
  s.c.type = LtType::F32;
  CHECK(mentions(lt_requirement_failures(s), "C type"));
  s = good;
  s.a.ld = 7160;  // not a multiple of 16 bytes
  CHECK(mentions(lt_requirement_failures(s), "A leading dimension"));
  s = good;
  s.epilogue = "CUBLASLT_EPILOGUE_GELU";
  CHECK(mentions(lt_requirement_failures(s), "EPILOGUE"));
  s = lt_matmul_spec(Dtype::Fp8, 128, 4096, 7000, GemmOutput::Bf16, true, Fp8Recipe::Block128);
  CHECK(mentions(lt_requirement_failures(s), "multiple of 128"));
  s = lt_matmul_spec(Dtype::Fp8, 128, 4096, 7168, GemmOutput::Bf16, false, Fp8Recipe::Block128);
  s.fast_accum = true;
  CHECK(mentions(lt_requirement_failures(s), "accumulates in FP32"));
}

TEST_CASE("FP8 requirements: pointers 16-byte aligned, scales not null") {
  const LtMatmulSpec s = lt_matmul_spec(Dtype::Fp8, 64, 96, 128);
  const LtPointers aligned{0x1000, 0x2000, 0x3000, 0x3000, 0x4000, 0x4100};
  CHECK(lt_requirement_failures(s, &aligned).empty());
  LtPointers p = aligned;
  p.b_scale = 0x4004;  // the first run's scales: two floats of one buffer
  CHECK(mentions(lt_requirement_failures(s, &p), "B scale pointer"));
  p = aligned;
  p.a = 0x1008;
  CHECK(mentions(lt_requirement_failures(s, &p), "A pointer"));
  p = aligned;
  p.a_scale = 0;
  CHECK(mentions(lt_requirement_failures(s, &p), "scale pointer is null"));
}

TEST_CASE("BF16 descriptors: no scales, held to the alignment rules only") {
  const LtMatmulSpec s = lt_matmul_spec(Dtype::Bf16, 128, 4096, 7168);
  CHECK(s.a.type == LtType::Bf16);
  CHECK(s.a.scale == LtScaleMode::None);
  CHECK_FALSE(s.fast_accum);
  CHECK(lt_requirement_failures(s).empty());
  const LtMatmulSpec blk =
      lt_matmul_spec(Dtype::Bf16, 128, 4096, 7168, GemmOutput::Bf16, false, Fp8Recipe::Block128);
  CHECK(blk.recipe == Fp8Recipe::Tensor);  // a recipe is FP8's only
}

TEST_CASE("every smoke GEMM's descriptor meets the documented requirements") {
  const Grid g = make_grid("smoke");
  std::size_t fp8 = 0;
  for (const GridPoint& p : grid_points(g, Suite::Gemm)) {
    const TableSpec& t = g.tables[p.table];
    const Dtype dtype = parse_dtype(key_string(t.key, "dtype"));
    const GemmOutput out = t.pass == Pass::Bwd ? GemmOutput::Fp32Accumulate : GemmOutput::Bf16;
    const auto v = [&](std::size_t i) { return static_cast<std::int64_t>(p.values[i]); };
    const LtMatmulSpec s =
        lt_matmul_spec(dtype, v(0), v(1), v(2), out, out == GemmOutput::Bf16, gemm_recipe(t.impl));
    CAPTURE(describe(s));
    CHECK(lt_requirement_failures(s).empty());
    fp8 += s.fp8() ? 1U : 0U;
  }
  CHECK(fp8 == 36);  // 16 per tensor, 16 blockwise, 4 weight gradients
}

TEST_CASE("the descriptor's text names every attribute") {
  const std::string text =
      describe(lt_matmul_spec(Dtype::Fp8, 8192, 8192, 8192, GemmOutput::Bf16, true));
  for (const char* want :
       {"CUBLAS_COMPUTE_32F", "scale type CUDA_R_32F", "TRANSA CUBLAS_OP_T", "TRANSB CUBLAS_OP_N",
        "CUBLASLT_EPILOGUE_DEFAULT", "fast accumulation on", "A: CUDA_R_8F_E4M3 8192 x 8192",
        "CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F", "D: CUDA_R_16BF", "ld 8192"}) {
    CAPTURE(want);
    CHECK(text.find(want) != std::string::npos);
  }
  CHECK(recipe_text(Fp8Recipe::Block128).find("BLK128x128_32F") != std::string::npos);
}

}  // namespace hopsim::calib
