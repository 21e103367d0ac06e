// Expert (grouped) GEMMs with uneven tokens per expert, three ways:
//   lt_loop_1s         one cuBLASLt GEMM per expert on one stream
//   lt_loop_4s         the same spread round-robin over 4 streams, joined by events (what
//                      Transformer Engine's multi-stream GroupedLinear does on Hopper)
//   cublas_grouped_ex  one cublasGemmGroupedBatchedEx launch, one group per expert (BF16 only)
// Forward (pass fwd): Y_e[m_e, n] = X_e[m_e, k] · W_e[n, k]ᵀ.
// Weight gradient (pass bwd): dW_e[n, k] = dY_eᵀ[n, m_e] · X_e[m_e, k], run as the TN GEMM
// (M = n, N = k, K = m_e) on pre-transposed operands, as TE keeps them. Empty experts are skipped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "calibrate/backend/buffers.hpp"
#include "calibrate/backend/context.hpp"
#include "calibrate/backend/lt_gemm.hpp"

namespace hopsim::calib {

enum class ExpertImpl { LoopOneStream, LoopFourStreams, CublasGroupedEx };

ExpertImpl parse_expert_impl(const std::string& impl);

struct ExpertProblem {
  Dtype dtype = Dtype::Bf16;
  Pass pass = Pass::Fwd;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::vector<std::int64_t> tokens;  ///< per expert
};

/// Per-expert TN GEMM shape (M, N, K) of a problem (see the header comment).
struct ExpertGemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::size_t a_offset = 0;  ///< elements into the A buffer
  std::size_t b_offset = 0;
  std::size_t c_offset = 0;
};

std::vector<ExpertGemmShape> expert_gemm_shapes(const ExpertProblem& p);

/// Owns the operands of one problem (random, never zero) and runs it with one implementation.
class ExpertRunner {
 public:
  ExpertRunner(GpuContext& ctx, ExpertImpl impl, ExpertProblem problem);

  /// Enqueues the whole grouped GEMM on ctx.stream() (forks/joins side streams if needed).
  void run();

  const ExpertProblem& problem() const { return problem_; }

  const std::vector<ExpertGemmShape>& shapes() const { return shapes_; }

  const DeviceBuffer& a() const { return a_; }

  const DeviceBuffer& b() const { return b_; }

  const DeviceBuffer& c() const { return c_; }

 private:
  void run_loop(std::size_t streams);
  void run_grouped_ex();

  GpuContext& ctx_;
  ExpertImpl impl_;
  ExpertProblem problem_;
  std::vector<ExpertGemmShape> shapes_;
  DeviceBuffer a_, b_, c_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, LtGemm> gemms_;
  // cublasGemmGroupedBatchedEx arguments (host shape arrays, device pointer arrays).
  std::vector<int> gm_, gn_, gk_, group_size_;
  std::vector<float> alpha_, beta_;
  DeviceBuffer pointer_arrays_;
};

}  // namespace hopsim::calib
