// Which FP8 cuBLASLt configurations does cublasLtMatmul accept on this GPU, and which attribute
// or requirement does it refuse? On the first H200 run (CUDA 13.0, cuBLAS 13.1) the heuristic
// offered algorithms for every FP8 matmul of the harness and cublasLtMatmul refused each with
// CUBLAS_STATUS_NOT_SUPPORTED. This probe tries one 64 x 96 x 128 E4M3 GEMM (inputs all 1.0, so
// every output is 128) as the harness now builds it (core/lt_spec.hpp: the documented
// descriptor) and in variants, and prints per variant:
//   - the documented requirements the descriptor or its pointers break (checked on the host,
//     before any call: lt_requirement_failures),
//   - the descriptor attribute cuBLASLt refused while building it (backend/lt_desc.hpp),
//   - the heuristic's status and algorithm count, each algorithm's cublasLtMatmul status
//     (0 = success, 15 = not supported) and whether the output is right,
//   - cuBLASLt's own log lines for the variant (its logger callback, level 4: errors, hints,
//     info), which say why an algorithm was refused.
// run_gpu.sh builds and runs it on every GPU run (a few seconds):
//   nvcc -std=c++20 -I. -o fp8_probe calibrate/diagnostics/fp8_probe.cpp
//        calibrate/core/lt_spec.cpp -lcublasLt
// Exit 0 when the harness's own descriptor ran, 1 otherwise.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <cublasLt.h>

#include "calibrate/backend/lt_desc.hpp"
#include "calibrate/core/lt_spec.hpp"

namespace {

using namespace hopsim::calib;

constexpr std::int64_t kM = 64;
constexpr std::int64_t kN = 96;
constexpr std::int64_t kK = 128;

std::string g_log;  // cuBLASLt's messages during one variant

void on_log(int level, const char* function, const char* message) {
  g_log += "    cuBLASLt[" + std::to_string(level) + "] " + function + ": " + message + "\n";
}

void* device(std::size_t bytes, int byte) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess || cudaMemset(p, byte, bytes) != cudaSuccess) {
    std::fprintf(stderr, "fp8_probe: cudaMalloc of %zu bytes failed\n", bytes);
    std::exit(1);
  }
  return p;
}

float* ones(std::size_t count) {
  auto* p = static_cast<float*>(device(count * sizeof(float), 0));
  const std::vector<float> v(count, 1.0F);
  cudaMemcpy(p, v.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  return p;
}

struct Variant {
  const char* name;
  LtMatmulSpec spec;
  bool shared_scales = false;  // the first run's: A's and B's scales two floats of one buffer
  bool no_scales = false;
};

struct Buffers {
  void* a = device(kM * kK, 0x38);  // E4M3 1.0
  void* b = device(kN * kK, 0x38);
  void* c = device(kM * kN * 4, 0);
  void* d = device(kM * kN * 4, 0);
  float* pair = ones(2);
  float* scale_a = ones(4096);
  float* scale_b = ones(4096);
  void* workspace = device(32U << 20U, 0);
  std::size_t workspace_bytes = 32U << 20U;
};

// Whether D's first element is 128 (k ones times ones), in D's type.
bool output_right(const LtMatmulSpec& s, const void* d) {
  std::uint32_t raw = 0;
  cudaMemcpy(&raw, d, 4, cudaMemcpyDeviceToHost);
  if (s.d.type == LtType::F32) {
    float f = 0;
    static_assert(sizeof f == sizeof raw);
    std::memcpy(&f, &raw, sizeof f);
    return f == 128.0F;
  }
  return (raw & 0xFFFFU) == 0x4300U;  // BF16 128
}

void run_algorithms(cublasLtHandle_t lt, const Variant& v, const LtDesc& desc, const Buffers& buf,
                    bool& ran) {
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &buf.workspace_bytes, sizeof buf.workspace_bytes);
  cublasLtMatmulHeuristicResult_t results[8];
  int found = 0;
  const cublasStatus_t h = cublasLtMatmulAlgoGetHeuristic(lt, desc.op, desc.a, desc.b, desc.c,
                                                          desc.d, pref, 8, results, &found);
  std::printf("  heuristic status %d, %d algorithms; matmul status per algorithm:",
              static_cast<int>(h), found);
  const float alpha = 1.0F;
  const float beta = v.spec.beta;
  void* c = v.spec.c_is_d ? buf.d : buf.c;
  for (int i = 0; i < found; ++i) {
    cudaMemset(buf.d, 0, kM * kN * 4);
    const cublasStatus_t s =
        cublasLtMatmul(lt, desc.op, &alpha, buf.a, desc.a, buf.b, desc.b, &beta, c, desc.c, buf.d,
                       desc.d, &results[i].algo, buf.workspace, buf.workspace_bytes, nullptr);
    const bool right = s == CUBLAS_STATUS_SUCCESS && cudaDeviceSynchronize() == cudaSuccess &&
                       output_right(v.spec, buf.d);
    ran = ran || right;
    std::printf(" %d%s", static_cast<int>(s),
                s == CUBLAS_STATUS_SUCCESS ? (right ? "(right)" : "(WRONG)") : "");
  }
  std::printf(" | sync %d\n", static_cast<int>(cudaDeviceSynchronize()));
  cublasLtMatmulPreferenceDestroy(pref);
}

/// Tries one variant; true when an algorithm ran and gave the right output.
bool probe(cublasLtHandle_t lt, const Variant& v, const Buffers& buf) {
  std::printf("%s\n", v.name);
  const float* sa = v.shared_scales ? buf.pair + 1 : buf.scale_a;
  const float* sb = v.shared_scales ? buf.pair : buf.scale_b;
  LtPointers p{reinterpret_cast<std::uintptr_t>(buf.a), reinterpret_cast<std::uintptr_t>(buf.b),
               reinterpret_cast<std::uintptr_t>(v.spec.c_is_d ? buf.d : buf.c),
               reinterpret_cast<std::uintptr_t>(buf.d), reinterpret_cast<std::uintptr_t>(sa),
               reinterpret_cast<std::uintptr_t>(sb)};
  if (v.no_scales) {
    p.a_scale = p.b_scale = 0;
  }
  for (const std::string& f : lt_requirement_failures(v.spec, &p)) {
    std::printf("  requirement broken: %s\n", f.c_str());
  }
  g_log.clear();
  LtDesc desc;
  lt_create(desc, v.spec);
  if (desc.ok() && !v.no_scales) {
    lt_set_scale_pointers(desc, sa, sb);
  }
  bool ran = false;
  if (!desc.ok()) {
    std::printf("  descriptor refused at %s: status %d\n", desc.failed.c_str(),
                static_cast<int>(desc.status));
  } else {
    run_algorithms(lt, v, desc, buf, ran);
  }
  std::printf("%s  => %s\n", g_log.c_str(), ran ? "RUNS" : "REFUSED");
  return ran;
}

LtMatmulSpec with(LtMatmulSpec s, void (*change)(LtMatmulSpec&)) {
  change(s);
  return s;
}

std::vector<Variant> variants() {
  const LtMatmulSpec tensor = lt_matmul_spec(Dtype::Fp8, kM, kN, kK, GemmOutput::Bf16, false);
  const LtMatmulSpec block =
      lt_matmul_spec(Dtype::Fp8, kM, kN, kK, GemmOutput::Bf16, false, Fp8Recipe::Block128);
  std::vector<Variant> v{
      {"1 harness, per tensor (documented: TN, 32F, own aligned scales, BF16 C = D)", tensor},
      {"2 the first run's scales: two floats of one buffer (B's 4 B past alignment)", tensor,
       true},
      {"3 no scale pointers", tensor, false, true},
      {"4 C its own buffer", with(tensor, [](LtMatmulSpec& s) { s.c_is_d = false; })},
      {"5 FP32 C and D", lt_matmul_spec(Dtype::Fp8, kM, kN, kK, GemmOutput::Fp32Accumulate)},
      {"6 fast accumulation", lt_matmul_spec(Dtype::Fp8, kM, kN, kK, GemmOutput::Bf16, true)},
      {"7 NN layout (documented as refused: checks the probe)",
       with(tensor, [](LtMatmulSpec& s) { s.transa = false; s.a.rows = kN; s.a.cols = kK;
                                          s.a.ld = kN; })}};
  if (kLtBlockScaling) {
    v.push_back({"8 harness, blockwise: A activations VEC128_32F, B weights BLK128x128_32F", block});
    v.push_back({"9 blockwise swapped: A weights BLK128x128_32F, B activations VEC128_32F",
                 with(tensor, [](LtMatmulSpec& s) {
                   s.recipe = Fp8Recipe::Block128;
                   s.a.scale = LtScaleMode::Blk128x128_32F;
                   s.b.scale = LtScaleMode::Vec128_32F;
                 })});
  } else {
    std::printf("blockwise FP8 not probed: these cuBLAS headers (%d) predate 12.9\n",
                CUBLAS_VERSION);
  }
  return v;
}

}  // namespace

int main() {
  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "fp8_probe: cublasLtCreate failed (no GPU?)\n");
    return 1;
  }
  cublasLtLoggerSetCallback(on_log);
  cublasLtLoggerSetLevel(4);
  std::printf("cuBLASLt %zu (headers %d), CUDA runtime %d; 64 x 96 x 128 E4M3 GEMMs\n",
              cublasLtGetVersion(), CUBLAS_VERSION, CUDART_VERSION);
  const Buffers buf;
  bool harness_ok = false;
  std::string runs;
  for (const Variant& v : variants()) {
    const bool ok = probe(lt, v, buf);
    harness_ok = harness_ok || (ok && v.name[0] == '1');
    runs += ok ? std::string(" ") + v.name[0] : "";
  }
  std::printf("fp8_probe: variants that run:%s; the harness's per-tensor descriptor %s\n",
              runs.empty() ? " none" : runs.c_str(), harness_ok ? "RUNS" : "is REFUSED");
  cublasLtDestroy(lt);
  return harness_ok ? 0 : 1;
}
