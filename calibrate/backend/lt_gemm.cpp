// cuBLASLt descriptors, heuristic algorithm choice and the matmul call.
#include "calibrate/backend/lt_gemm.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/backend/cuda_check.hpp"
#include "calibrate/backend/lt_desc.hpp"

namespace hopsim::calib {

struct LtGemm::State {
  LtMatmulSpec spec;
  LtDesc desc;
  const float* a_scale = nullptr;  // cuBLAS's A and B (lt_set_scale_pointers)
  const float* b_scale = nullptr;
  DeviceBuffer owned_scales[2];
  bool requirements_checked = false;
  /// cuBLASLt's heuristic choices, best first; `algo` indexes the one in use. A choice that
  /// cublasLtMatmul then refuses (CUBLAS_STATUS_NOT_SUPPORTED) is dropped for the next.
  std::vector<cublasLtMatmulAlgo_t> algos;
  std::size_t algo = 0;
};

namespace {

std::uintptr_t address(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

void throw_if_refused(const LtDesc& d, const std::string& what) {
  if (!d.ok()) {
    throw_cublas_error(d.status, fmt::format("{}: {}", what, d.failed).c_str(), __FILE__,
                       __LINE__);
  }
}

}  // namespace

LtGemm::LtGemm(Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k, bool fast_accum,
               GemmOutput output, Fp8Recipe recipe)
    : LtGemm(lt_matmul_spec(dtype, m, n, k, output, fast_accum, recipe)) {}

LtGemm::LtGemm(const LtMatmulSpec& spec) : state_(std::make_unique<State>()) {
  state_->spec = spec;
  if (spec.fp8() && spec.recipe == Fp8Recipe::Block128 && !kLtBlockScaling) {
    throw CudaError(fmt::format("{}: blockwise FP8 needs cuBLAS 12.9 or later (these headers: {})",
                                describe(), CUBLAS_VERSION),
                    "cublas", CUBLAS_STATUS_NOT_SUPPORTED);
  }
  lt_create(state_->desc, spec);
  throw_if_refused(state_->desc, describe());
}

LtGemm::~LtGemm() = default;
LtGemm::LtGemm(LtGemm&&) noexcept = default;
LtGemm& LtGemm::operator=(LtGemm&&) noexcept = default;

const LtMatmulSpec& LtGemm::spec() const {
  return state_->spec;
}

void LtGemm::set_scales(const float* a_scale, const float* b_scale) {
  State& s = *state_;
  // Per tensor, cuBLAS's A is our B (weights) and vice versa; blockwise, they match.
  s.a_scale = s.spec.a_is_weights ? b_scale : a_scale;
  s.b_scale = s.spec.a_is_weights ? a_scale : b_scale;
  lt_set_scale_pointers(s.desc, s.a_scale, s.b_scale);
  throw_if_refused(s.desc, describe());
}

void LtGemm::use_unit_scales() {
  State& s = *state_;
  const std::int64_t counts[2] = {lt_scale_count(s.spec.a), lt_scale_count(s.spec.b)};
  for (std::size_t i = 0; i < 2; ++i) {
    const std::vector<float> ones(static_cast<std::size_t>(std::max<std::int64_t>(counts[i], 1)),
                                  1.0F);
    s.owned_scales[i] = DeviceBuffer(Elem::F32, ones.size());
    HOPSIM_CUDA_CHECK(cudaMemcpy(s.owned_scales[i].get(), ones.data(), ones.size() * sizeof(float),
                                 cudaMemcpyHostToDevice));
  }
  const auto* cublas_a = static_cast<const float*>(s.owned_scales[0].get());
  const auto* cublas_b = static_cast<const float*>(s.owned_scales[1].get());
  // set_scales takes (activations, weights).
  if (s.spec.a_is_weights) {
    set_scales(cublas_b, cublas_a);
  } else {
    set_scales(cublas_a, cublas_b);
  }
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
  HOPSIM_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, s.desc.op, s.desc.a, s.desc.b,
                                                     s.desc.c, s.desc.d, pref, kAlgoCandidates,
                                                     results.data(), &found));
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

void LtGemm::check_requirements(const void* a, const void* b, const void* c) const {
  State& s = *state_;
  if (s.requirements_checked) {
    return;
  }
  const LtPointers p{address(a), address(b), address(c), address(c), address(s.a_scale),
                     address(s.b_scale)};
  const std::vector<std::string> failures = lt_requirement_failures(s.spec, &p);
  if (!failures.empty()) {
    throw CudaError(fmt::format("{} breaks cuBLASLt's requirements: {}", describe(),
                                fmt::join(failures, "; ")),
                    "cublas", CUBLAS_STATUS_NOT_SUPPORTED);
  }
  s.requirements_checked = true;
}

void LtGemm::run(cublasLtHandle_t handle, cudaStream_t stream, const void* a, const void* b,
                 void* c, LtWorkspace workspace) const {
  State& s = *state_;
  const float alpha = 1.0F;
  const float beta = s.spec.beta;
  if (!has_algo()) {
    throw CudaError(fmt::format("{} run before select_algo", describe()), "cublas", 0);
  }
  // Our A is the activations, B the weights: cuBLAS's A and B as the spec assigns them.
  const void* cublas_a = s.spec.a_is_weights ? b : a;
  const void* cublas_b = s.spec.a_is_weights ? a : b;
  check_requirements(cublas_a, cublas_b, c);
  for (; s.algo < s.algos.size(); ++s.algo) {
    const cublasStatus_t status =
        cublasLtMatmul(handle, s.desc.op, &alpha, cublas_a, s.desc.a, cublas_b, s.desc.b, &beta, c,
                       s.desc.c, c, s.desc.d, &s.algos[s.algo], workspace.data, workspace.bytes,
                       stream);
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
  const LtMatmulSpec& s = state_->spec;
  const std::int64_t m = s.a_is_weights ? s.n : s.m;  // ours: C[m, n] = A[m, k]·B[n, k]ᵀ
  const std::int64_t n = s.a_is_weights ? s.m : s.n;
  return fmt::format("{} GEMM m={} n={} k={} (TN{}{})", to_string(s.dtype), m, n, s.k,
                     s.beta != 0.0F ? ", FP32 C += A·Bᵀ" : "",
                     s.fp8() && s.recipe == Fp8Recipe::Block128 ? ", 1x128/128x128 scales" : "");
}

}  // namespace hopsim::calib
