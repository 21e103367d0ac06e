// Which FP8 cuBLASLt configurations does cublasLtMatmul accept on this GPU? On the first H200
// run (CUDA 13.0, cuBLAS 13.1) the heuristic offered algorithms for every FP8 matmul of the
// harness and cublasLtMatmul refused each with CUBLAS_STATUS_NOT_SUPPORTED. This probe tries one
// 64 x 96 x 128 E4M3 GEMM in variants of what the harness does (where the scale pointers live,
// C aliasing D, the output type) and prints, per variant, the heuristic's status and each
// offered algorithm's matmul status (0 = success, 15 = not supported). run_gpu.sh builds and
// runs it when an FP8 check fails:
//   nvcc -std=c++17 -o fp8_probe calibrate/diagnostics/fp8_probe.cpp -lcublasLt && ./fp8_probe
// CUBLASLT_LOG_LEVEL=5 adds cuBLASLt's own trace.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include <cublasLt.h>

namespace {

void* device_zeros(std::size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess || cudaMemset(p, 0, bytes) != cudaSuccess) {
    std::fprintf(stderr, "fp8_probe: cudaMalloc of %zu bytes failed\n", bytes);
    std::exit(1);
  }
  return p;
}

float* device_one() {
  auto* p = static_cast<float*>(device_zeros(sizeof(float)));
  const float one = 1.0F;
  cudaMemcpy(p, &one, sizeof one, cudaMemcpyHostToDevice);
  return p;
}

struct Variant {
  const char* name;
  int scales;       // 0: none; 1: one buffer, A at +1 (as the harness); 2: separate buffers
  bool separate_c;  // C its own buffer rather than D's
  cudaDataType_t out;
};

struct Buffers {
  void* a;
  void* b;
  void* c;
  void* d;
  float* pair;  // two floats, as the harness passes its scales
  float* scale_a;
  float* scale_b;
  void* workspace;
  std::size_t workspace_bytes;
};

void probe(cublasLtHandle_t lt, const Variant& v, const Buffers& buf) {
  const std::int64_t m = 64;
  const std::int64_t n = 96;
  const std::int64_t k = 128;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  const cublasOperation_t t = CUBLAS_OP_T;
  const cublasOperation_t none = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
  cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none);
  const float* sa = v.scales == 1 ? buf.pair + 1 : buf.scale_a;
  const float* sb = v.scales == 1 ? buf.pair : buf.scale_b;
  if (v.scales != 0) {
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa);
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb);
  }
  cublasLtMatrixLayout_t la = nullptr;
  cublasLtMatrixLayout_t lb = nullptr;
  cublasLtMatrixLayout_t lc = nullptr;
  cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, n, k);
  cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, m, k);
  cublasLtMatrixLayoutCreate(&lc, v.out, n, m, n);
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulPreferenceCreate(&pref);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &buf.workspace_bytes, sizeof buf.workspace_bytes);
  cublasLtMatmulHeuristicResult_t results[8];
  int found = 0;
  const cublasStatus_t h =
      cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 8, results, &found);
  std::printf("%-34s heuristic %d, %d algorithms:", v.name, static_cast<int>(h), found);
  const float alpha = 1.0F;
  const float beta = 0.0F;
  for (int i = 0; i < found; ++i) {
    const cublasStatus_t s = cublasLtMatmul(
        lt, op, &alpha, buf.a, la, buf.b, lb, &beta, v.separate_c ? buf.c : buf.d, lc, buf.d, lc,
        &results[i].algo, buf.workspace, buf.workspace_bytes, nullptr);
    std::printf(" %d", static_cast<int>(s));
  }
  std::printf(" | sync %d\n", static_cast<int>(cudaDeviceSynchronize()));
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatmulDescDestroy(op);
}

}  // namespace

int main() {
  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "fp8_probe: cublasLtCreate failed\n");
    return 1;
  }
  const std::size_t workspace = 32U << 20U;
  const Buffers buf{device_zeros(96 * 128),
                    device_zeros(64 * 128),
                    device_zeros(64 * 96 * 4),
                    device_zeros(64 * 96 * 4),
                    device_one(),
                    device_one(),
                    device_one(),
                    device_zeros(workspace),
                    workspace};
  const Variant variants[] = {{"harness: scales at s, s+1; C = D", 1, false, CUDA_R_16BF},
                              {"scales in separate buffers", 2, false, CUDA_R_16BF},
                              {"no scale pointers", 0, false, CUDA_R_16BF},
                              {"separate scales, C != D", 2, true, CUDA_R_16BF},
                              {"separate scales, FP32 out", 2, false, CUDA_R_32F},
                              {"no scales, FP32 out", 0, false, CUDA_R_32F}};
  for (const Variant& v : variants) {
    probe(lt, v, buf);
  }
  std::printf("cuBLASLt %zu, CUDA runtime %d\n", cublasLtGetVersion(), CUDART_VERSION);
  cublasLtDestroy(lt);
  return 0;
}
