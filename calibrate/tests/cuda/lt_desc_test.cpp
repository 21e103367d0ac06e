// Host-side parts of the backend that need no GPU: cuBLASLt descriptors, expert GEMM layout,
// FP8 token padding, number decoding, library versions and the no-device message.
#include <cmath>

#include <doctest/doctest.h>

#include "calibrate/backend/buffers.hpp"
#include "calibrate/backend/device.hpp"
#include "calibrate/backend/experts.hpp"
#include "calibrate/backend/lt_desc.hpp"
#include "calibrate/backend/lt_gemm.hpp"
#include "calibrate/backend/suites.hpp"
#include "calibrate/core/grid.hpp"

namespace hopsim::calib {

TEST_CASE("cuBLASLt descriptors for every smoke GEMM shape, BF16 and FP8 (no GPU)") {
  const Grid g = make_grid("smoke");
  std::size_t built = 0;
  const float scale = 1.0F;  // a host address is fine: descriptors never dereference it
  std::size_t wgrad = 0;
  for (const GridPoint& p : grid_points(g, Suite::Gemm)) {
    const Dtype dtype = parse_dtype(key_string(g.tables[p.table].key, "dtype"));
    const bool bwd = g.tables[p.table].pass == Pass::Bwd;  // a weight gradient: FP32 C += A·Bᵀ
    LtGemm gemm(dtype, static_cast<std::int64_t>(p.values[0]),
                static_cast<std::int64_t>(p.values[1]), static_cast<std::int64_t>(p.values[2]),
                /*fast_accum=*/false, bwd ? GemmOutput::Fp32Accumulate : GemmOutput::Bf16,
                gemm_recipe(g.tables[p.table].impl));
    wgrad += bwd ? 1U : 0U;
    if (dtype == Dtype::Fp8) {
      gemm.set_scales(&scale, &scale);
    }
    CHECK_FALSE(gemm.has_algo());
    ++built;
  }
  CHECK(built == 56);
  CHECK(wgrad == 8);
  CHECK_FALSE(LtGemm(Dtype::Fp8, 8192, 8192, 8192, /*fast_accum=*/true).has_algo());
  CHECK(LtGemm(Dtype::Fp8, 128, 4096, 7168).describe() == "fp8 GEMM m=128 n=4096 k=7168 (TN)");
  CHECK(LtGemm(Dtype::Bf16, 4096, 7168, 4096, false, GemmOutput::Fp32Accumulate).describe() ==
        "bf16 GEMM m=4096 n=7168 k=4096 (TN, FP32 C += A·Bᵀ)");
}

namespace {

template <typename T>
T desc_attribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr) {
  T value{};
  std::size_t written = 0;
  REQUIRE(cublasLtMatmulDescGetAttribute(d, attr, &value, sizeof value, &written) ==
          CUBLAS_STATUS_SUCCESS);
  CHECK(written == sizeof value);
  return value;
}

template <typename T>
T layout_attribute(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr) {
  T value{};
  std::size_t written = 0;
  REQUIRE(cublasLtMatrixLayoutGetAttribute(l, attr, &value, sizeof value, &written) ==
          CUBLAS_STATUS_SUCCESS);
  return value;
}

}  // namespace

TEST_CASE("the cuBLASLt descriptor holds the spec's documented FP8 attributes (no GPU)") {
  for (Fp8Recipe recipe : {Fp8Recipe::Tensor, Fp8Recipe::Block128}) {
    const LtMatmulSpec spec =
        lt_matmul_spec(Dtype::Fp8, 128, 4096, 7168, GemmOutput::Bf16, true, recipe);
    LtDesc d;
    lt_create(d, spec);
    const float scale = 1.0F;
    lt_set_scale_pointers(d, &scale, &scale);
    REQUIRE_MESSAGE(d.ok(), d.failed);
    CHECK(desc_attribute<cublasComputeType_t>(d.op, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE) ==
          CUBLAS_COMPUTE_32F);
    CHECK(desc_attribute<cudaDataType_t>(d.op, CUBLASLT_MATMUL_DESC_SCALE_TYPE) == CUDA_R_32F);
    CHECK(desc_attribute<cublasOperation_t>(d.op, CUBLASLT_MATMUL_DESC_TRANSA) == CUBLAS_OP_T);
    CHECK(desc_attribute<cublasOperation_t>(d.op, CUBLASLT_MATMUL_DESC_TRANSB) == CUBLAS_OP_N);
    CHECK(desc_attribute<cublasLtEpilogue_t>(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE) ==
          CUBLASLT_EPILOGUE_DEFAULT);
    const bool block = recipe == Fp8Recipe::Block128;
    CHECK(desc_attribute<std::int8_t>(d.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM) == (block ? 0 : 1));
    CHECK(desc_attribute<const void*>(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER) == &scale);
    CHECK(desc_attribute<const void*>(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER) == &scale);
    CHECK(desc_attribute<std::int32_t>(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE) ==
          (block ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F : 0));
    CHECK(desc_attribute<std::int32_t>(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE) ==
          (block ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F : 0));
    CHECK(layout_attribute<cudaDataType_t>(d.a, CUBLASLT_MATRIX_LAYOUT_TYPE) == CUDA_R_8F_E4M3);
    CHECK(layout_attribute<cudaDataType_t>(d.b, CUBLASLT_MATRIX_LAYOUT_TYPE) == CUDA_R_8F_E4M3);
    CHECK(layout_attribute<cudaDataType_t>(d.c, CUBLASLT_MATRIX_LAYOUT_TYPE) == CUDA_R_16BF);
    CHECK(layout_attribute<cudaDataType_t>(d.d, CUBLASLT_MATRIX_LAYOUT_TYPE) == CUDA_R_16BF);
    CHECK(layout_attribute<std::int64_t>(d.a, CUBLASLT_MATRIX_LAYOUT_LD) == 7168);
    CHECK(layout_attribute<std::uint64_t>(d.d, CUBLASLT_MATRIX_LAYOUT_ROWS) ==
          (block ? 128U : 4096U));
  }
}

TEST_CASE("expert GEMM shapes: offsets follow the token prefix sums, empty experts are skipped") {
  const ExpertProblem fwd{Dtype::Bf16, Pass::Fwd, 64, 128, {0, 3, 5}};
  const auto f = expert_gemm_shapes(fwd);
  REQUIRE(f.size() == 2);
  CHECK(f[0].m == 3);
  CHECK(f[0].n == 64);
  CHECK(f[0].k == 128);
  CHECK(f[0].a_offset == 0);
  CHECK(f[0].b_offset == 1 * 64 * 128);  // weights of expert 1
  CHECK(f[1].a_offset == 3 * 128);
  CHECK(f[1].c_offset == 3 * 64);
  const ExpertProblem wgrad{Dtype::Bf16, Pass::Bwd, 64, 128, {0, 3, 5}};
  const auto w = expert_gemm_shapes(wgrad);
  REQUIRE(w.size() == 2);
  CHECK(w[1].m == 64);  // dW_e [n, k] with the tokens as the reduction dimension
  CHECK(w[1].n == 128);
  CHECK(w[1].k == 5);
  CHECK(w[1].a_offset == 3 * 64);
  CHECK(w[1].b_offset == 3 * 128);
  CHECK(w[1].c_offset == 2 * 64 * 128);
  CHECK_THROWS_AS(parse_expert_impl("cutlass"), CalibError);
}

TEST_CASE("FP8 expert token counts are padded to multiples of 16") {
  const TableSpec bf16 =
      grouped_spec({Dtype::Bf16, "lt_loop_1s", 4096, 7168, "ramp1.5", Pass::Fwd}, {8}, {100});
  const TableSpec fp8 =
      grouped_spec({Dtype::Fp8, "lt_loop_1s", 4096, 7168, "ramp1.5", Pass::Fwd}, {8}, {100});
  const GridPoint p{0, 0, {8, 100}};
  std::int64_t total = 0;
  for (std::int64_t t : expert_tokens(bf16, p)) {
    total += t;
  }
  CHECK(total == 800);
  for (std::int64_t t : expert_tokens(fp8, p)) {
    CHECK(t % 16 == 0);
  }
}

TEST_CASE("BF16 and FP8 E4M3 decoding") {
  CHECK(bf16_to_double(0x3F80) == 1.0);
  CHECK(bf16_to_double(0xC000) == -2.0);
  CHECK(fp8_e4m3_to_double(0x38) == 1.0);    // exponent 7, mantissa 0
  CHECK(fp8_e4m3_to_double(0x7E) == 448.0);  // largest finite
  CHECK(fp8_e4m3_to_double(0x01) == std::ldexp(1.0, -9));
  CHECK(fp8_e4m3_to_double(0xB8) == -1.0);
  CHECK(std::isnan(fp8_e4m3_to_double(0x7F)));
}

TEST_CASE("library versions need no device, and the no-device reason is one clear line") {
  const auto v = library_versions();
  CHECK(v["cudnn"].get<std::int64_t>() >= 90000);
  CHECK(v["cublas"].get<std::int64_t>() >= 120000);
  if (const auto reason = device_unavailable_reason()) {
    CHECK(reason->rfind("no CUDA device: ", 0) == 0);
    CHECK(reason->find('\n') == std::string::npos);
  }
}

}  // namespace hopsim::calib
