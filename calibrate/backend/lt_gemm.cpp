// cuBLASLt descriptors, heuristic algorithm choice and the matmul call.
#include "calibrate/backend/lt_gemm.hpp"

#include <array>
#include <vector>

#include <fmt/format.h>

#include "calibrate/backend/cuda_check.hpp"

namespace hopsim::calib {

struct LtGemm::State {
  Dtype dtype = Dtype::Bf16;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  GemmOutput output = GemmOutput::Bf16;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t weights = nullptr;      // cuBLAS "A": B stored K×N column-major
  cublasLtMatrixLayout_t activations = nullptr;  // cuBLAS "B": A stored K×M column-major
  cublasLtMatrixLayout_t out = nullptr;          // N×M column-major, BF16 or FP32
  /// cuBLASLt's heuristic choices, best first; `algo` indexes the one in use. A choice that
  /// cublasLtMatmul then refuses (CUBLAS_STATUS_NOT_SUPPORTED) is dropped for the next.
  std::vector<cublasLtMatmulAlgo_t> algos;
  std::size_t algo = 0;

  ~State() {
    cublasLtMatrixLayoutDestroy(out);
    cublasLtMatrixLayoutDestroy(activations);
    cublasLtMatrixLayoutDestroy(weights);
    cublasLtMatmulDescDestroy(op);
  }
};

LtGemm::LtGemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k, bool fast_accum,
               GemmOutput output)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.dtype = dtype;
  s.output = output;
  s.m = m;
  s.n = n;
  s.k = k;
  const cudaDataType_t in = dtype == Dtype::Fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
  HOPSIM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&s.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T;
  const cublasOperation_t none = CUBLAS_OP_N;
  HOPSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose,
                                                     sizeof transpose));
  HOPSIM_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none));
  if (dtype == Dtype::Fp8 && fast_accum) {
    const std::int8_t on = 1;
    HOPSIM_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(s.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &on, sizeof on));
  }
  const auto rows = static_cast<std::uint64_t>(k);
  HOPSIM_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&s.weights, in, rows, static_cast<std::uint64_t>(n), k));
  HOPSIM_CUBLAS_CHECK(
      cublasLtMatrixLayoutCreate(&s.activations, in, rows, static_cast<std::uint64_t>(m), k));
  const cudaDataType_t out = output == GemmOutput::Fp32Accumulate ? CUDA_R_32F : CUDA_R_16BF;
  HOPSIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&s.out, out, static_cast<std::uint64_t>(n),
                                                 static_cast<std::uint64_t>(m), n));
}

LtGemm::~LtGemm() = default;
LtGemm::LtGemm(LtGemm&&) noexcept = default;
LtGemm& LtGemm::operator=(LtGemm&&) noexcept = default;

void LtGemm::set_scales(const float* a_scale, const float* b_scale) {
  // cuBLAS's A is our B (weights) and vice versa.
  HOPSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      state_->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b_scale, sizeof b_scale));
  HOPSIM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
      state_->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale, sizeof a_scale));
}

void LtGemm::select_algo(cublasLtHandle_t handle, std::size_t workspace_bytes) {
  State& s = *state_;
  cublasLtMatmulPreference_t pref = nullptr;
  HOPSIM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::unique_ptr<cublasLtMatmulPreferenceOpaque_t,
                        cublasStatus_t (*)(cublasLtMatmulPreference_t)>
      guard(pref, cublasLtMatmulPreferenceDestroy);
  HOPSIM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof workspace_bytes));
  std::array<cublasLtMatmulHeuristicResult_t, kAlgoCandidates> results{};
  int found = 0;
  HOPSIM_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, s.op, s.weights, s.activations, s.out,
                                                     s.out, pref, kAlgoCandidates, results.data(),
                                                     &found));
  s.algos.clear();
  s.algo = 0;
  for (int i = 0; i < found; ++i) {
    if (results.at(static_cast<std::size_t>(i)).state == CUBLAS_STATUS_SUCCESS) {
      s.algos.push_back(results.at(static_cast<std::size_t>(i)).algo);
    }
  }
  if (s.algos.empty()) {
    throw CudaError(fmt::format("cuBLASLt has no algorithm for {}", describe()), "cublas", 0);
  }
}

bool LtGemm::has_algo() const {
  return state_->algo < state_->algos.size();
}

void LtGemm::run(cublasLtHandle_t handle, cudaStream_t stream, const void* a, const void* b,
                 void* c, LtWorkspace workspace) const {
  State& s = *state_;
  const float alpha = 1.0F;
  const float beta = s.output == GemmOutput::Fp32Accumulate ? 1.0F : 0.0F;
  if (!has_algo()) {
    throw CudaError(fmt::format("{} run before select_algo", describe()), "cublas", 0);
  }
  for (; s.algo < s.algos.size(); ++s.algo) {
    const cublasStatus_t status =
        cublasLtMatmul(handle, s.op, &alpha, b, s.weights, a, s.activations, &beta, c, s.out, c,
                       s.out, &s.algos[s.algo], workspace.data, workspace.bytes, stream);
    if (status == CUBLAS_STATUS_SUCCESS) {
      return;
    }
    if (status != CUBLAS_STATUS_NOT_SUPPORTED || s.algo + 1 == s.algos.size()) {
      throw_cublas_error(status,
                         fmt::format("cublasLtMatmul, {}, heuristic algorithm {} of {}", describe(),
                                     s.algo + 1, s.algos.size())
                             .c_str(),
                         __FILE__, __LINE__);
    }
    fmt::print(stderr, "cuBLASLt refused heuristic algorithm {} of {} for {}; trying the next\n",
               s.algo + 1, s.algos.size(), describe());
  }
}

std::string LtGemm::describe() const {
  return fmt::format("{} GEMM m={} n={} k={} (TN{})", to_string(state_->dtype), state_->m,
                     state_->n, state_->k,
                     state_->output == GemmOutput::Fp32Accumulate ? ", FP32 C += A·Bᵀ" : "");
}

}  // namespace hopsim::calib
