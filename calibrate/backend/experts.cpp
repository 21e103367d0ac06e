// Expert GEMM operands, the per-expert loops on one or four streams, and the grouped launch.
#include "calibrate/backend/experts.hpp"

#include <fmt/format.h>

#include "calibrate/backend/cuda_check.hpp"
#include <cublas_v2.h>

namespace hopsim::calib {
namespace {

Elem input_elem(Dtype d) {
  return d == Dtype::Fp8 ? Elem::Fp8E4m3 : Elem::Bf16;
}

std::size_t sz(std::int64_t v) {
  return static_cast<std::size_t>(v);
}

}  // namespace

ExpertImpl parse_expert_impl(const std::string& impl) {
  if (impl == "lt_loop_1s") {
    return ExpertImpl::LoopOneStream;
  }
  if (impl == "lt_loop_4s") {
    return ExpertImpl::LoopFourStreams;
  }
  if (impl == "cublas_grouped_ex") {
    return ExpertImpl::CublasGroupedEx;
  }
  throw CalibError(fmt::format("unknown grouped GEMM impl \"{}\"", impl));
}

std::vector<ExpertGemmShape> expert_gemm_shapes(const ExpertProblem& p) {
  std::vector<ExpertGemmShape> shapes;
  std::size_t tokens_before = 0;
  for (std::size_t e = 0; e < p.tokens.size(); ++e) {
    const std::int64_t t = p.tokens[e];
    if (t > 0) {
      if (p.pass == Pass::Fwd) {
        // A = X [T, k], B = W [E, n, k], C = Y [T, n].
        shapes.push_back(
            {t, p.n, p.k, tokens_before * sz(p.k), e * sz(p.n * p.k), tokens_before * sz(p.n)});
      } else {
        // A = dYᵀ blocks [n, m_e], B = Xᵀ blocks [k, m_e], C = dW [E, n, k].
        shapes.push_back(
            {p.n, p.k, t, tokens_before * sz(p.n), tokens_before * sz(p.k), e * sz(p.n * p.k)});
      }
    }
    tokens_before += sz(t);
  }
  return shapes;
}

ExpertRunner::ExpertRunner(GpuContext& ctx, ExpertImpl impl, ExpertProblem problem)
    : ctx_(ctx), impl_(impl), problem_(std::move(problem)), shapes_(expert_gemm_shapes(problem_)) {
  if (impl_ == ExpertImpl::CublasGroupedEx && problem_.dtype != Dtype::Bf16) {
    throw CalibError("cublas_grouped_ex supports BF16 only (cuBLAS grouped GEMM has no FP8)");
  }
  std::size_t total = 0;
  for (std::int64_t t : problem_.tokens) {
    total += sz(t);
  }
  const std::size_t experts = problem_.tokens.size();
  const Elem in = input_elem(problem_.dtype);
  const std::size_t nk = sz(problem_.n * problem_.k);
  const bool fwd = problem_.pass == Pass::Fwd;
  a_ = DeviceBuffer(in, std::max<std::size_t>(1, total * sz(fwd ? problem_.k : problem_.n)));
  b_ = DeviceBuffer(in, std::max<std::size_t>(1, fwd ? experts * nk : total * sz(problem_.k)));
  c_ = DeviceBuffer(Elem::Bf16,
                    std::max<std::size_t>(1, fwd ? total * sz(problem_.n) : experts * nk));
  fill_random(a_.get(), in, a_.bytes() / elem_bytes(in), 11, 1.0F, ctx_.stream());
  fill_random(b_.get(), in, b_.bytes() / elem_bytes(in), 12, 1.0F, ctx_.stream());
  for (const ExpertGemmShape& s : shapes_) {
    const auto key = std::make_tuple(s.m, s.n, s.k);
    if (gemms_.count(key) == 0 && impl_ != ExpertImpl::CublasGroupedEx) {
      LtGemm g(problem_.dtype, s.m, s.n, s.k, /*fast_accum=*/problem_.pass == Pass::Fwd);
      if (problem_.dtype == Dtype::Fp8) {
        g.use_unit_scales();  // per-tensor FP32 scales, each in its own buffer
      }
      g.select_algo(ctx_.lt(), GpuContext::kLtWorkspaceBytes);
      gemms_.emplace(key, std::move(g));
    }
  }
  if (impl_ == ExpertImpl::CublasGroupedEx) {
    // Same column-major view as LtGemm: Cᵀ (N×M) = Bᵀ-transposed · A, transa = T, transb = N.
    for (const ExpertGemmShape& s : shapes_) {
      gm_.push_back(static_cast<int>(s.n));
      gn_.push_back(static_cast<int>(s.m));
      gk_.push_back(static_cast<int>(s.k));
      group_size_.push_back(1);
      alpha_.push_back(1.0F);
      beta_.push_back(0.0F);
    }
    const std::size_t g = shapes_.size();
    std::vector<const void*> host(3 * g);
    for (std::size_t i = 0; i < g; ++i) {
      host[i] = static_cast<const char*>(b_.get()) + 2 * shapes_[i].b_offset;          // cuBLAS A
      host[g + i] = static_cast<const char*>(a_.get()) + 2 * shapes_[i].a_offset;      // cuBLAS B
      host[2 * g + i] = static_cast<const char*>(c_.get()) + 2 * shapes_[i].c_offset;  // cuBLAS C
    }
    pointer_arrays_ = DeviceBuffer(std::max<std::size_t>(1, host.size() * sizeof(void*)));
    HOPSIM_CUDA_CHECK(cudaMemcpy(pointer_arrays_.get(), host.data(), host.size() * sizeof(void*),
                                 cudaMemcpyHostToDevice));
  }
  HOPSIM_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
}

void ExpertRunner::run() {
  switch (impl_) {
    case ExpertImpl::LoopOneStream:
      run_loop(1);
      break;
    case ExpertImpl::LoopFourStreams:
      run_loop(GpuContext::kSideStreams);
      break;
    case ExpertImpl::CublasGroupedEx:
      run_grouped_ex();
      break;
  }
}

void ExpertRunner::run_loop(std::size_t streams) {
  const std::size_t in_bytes = elem_bytes(input_elem(problem_.dtype));
  if (streams > 1) {
    HOPSIM_CUDA_CHECK(cudaEventRecord(ctx_.fork_event(), ctx_.stream()));
    for (std::size_t i = 0; i < streams; ++i) {
      HOPSIM_CUDA_CHECK(cudaStreamWaitEvent(ctx_.side_stream(i), ctx_.fork_event(), 0));
    }
  }
  for (std::size_t e = 0; e < shapes_.size(); ++e) {
    const ExpertGemmShape& s = shapes_[e];
    const std::size_t lane = e % streams;
    const cudaStream_t stream = streams > 1 ? ctx_.side_stream(lane) : ctx_.stream();
    gemms_.at(std::make_tuple(s.m, s.n, s.k))
        .run(ctx_.lt(), stream, static_cast<const char*>(a_.get()) + in_bytes * s.a_offset,
             static_cast<const char*>(b_.get()) + in_bytes * s.b_offset,
             static_cast<char*>(c_.get()) + 2 * s.c_offset, ctx_.lt_workspace(lane));
  }
  if (streams > 1) {
    for (std::size_t i = 0; i < streams; ++i) {
      HOPSIM_CUDA_CHECK(cudaEventRecord(ctx_.join_event(i), ctx_.side_stream(i)));
      HOPSIM_CUDA_CHECK(cudaStreamWaitEvent(ctx_.stream(), ctx_.join_event(i), 0));
    }
  }
}

void ExpertRunner::run_grouped_ex() {
  const int groups = static_cast<int>(shapes_.size());
  if (groups == 0) {
    return;
  }
  const auto* arrays = static_cast<void* const*>(pointer_arrays_.get());
  const auto g = static_cast<std::size_t>(groups);
  std::vector<cublasOperation_t> transa(g, CUBLAS_OP_T);
  std::vector<cublasOperation_t> transb(g, CUBLAS_OP_N);
  HOPSIM_CUBLAS_CHECK(cublasGemmGroupedBatchedEx(
      ctx_.blas(), transa.data(), transb.data(), gm_.data(), gn_.data(), gk_.data(), alpha_.data(),
      arrays, CUDA_R_16BF, gk_.data(), arrays + g, CUDA_R_16BF, gk_.data(), beta_.data(),
      arrays + 2 * g, CUDA_R_16BF, gm_.data(), groups, group_size_.data(), CUBLAS_COMPUTE_32F));
}

}  // namespace hopsim::calib
