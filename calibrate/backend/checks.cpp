// Small-shape correctness checks with poisoned outputs, compared with core/reference.
#include "calibrate/backend/checks.hpp"

#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "calibrate/backend/cuda_check.hpp"
#include "calibrate/backend/experts.hpp"
#include "calibrate/core/reference.hpp"
#include "calibrate/core/workload_shapes.hpp"

namespace hopsim::calib {

CheckResult guarded(Op op, const std::string& name, const std::function<bool(std::string&)>& body) {
  CheckResult r{op, name, false, {}, {}, {}};
  try {
    r.passed = body(r.detail);
  } catch (const std::exception& e) {
    r.detail += fmt::format("{}error: {}", r.detail.empty() ? "" : "; ", e.what());
  }
  return r;
}

namespace {

std::size_t sz(std::int64_t v) {
  return static_cast<std::size_t>(v);
}

// Row-major rows × cols → cols × rows.
std::vector<double> transposed(const std::vector<double>& v, std::int64_t rows, std::int64_t cols) {
  std::vector<double> out(v.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      out[sz(c * rows + r)] = v[sz(r * cols + c)];
    }
  }
  return out;
}

// C = A·Bᵀ, or for a weight gradient C += A·Bᵀ into a random FP32 C.
bool gemm_check(GpuContext& ctx, Dtype dtype, GemmOutput output, Fp8Recipe recipe,
                std::string& detail) {
  const std::int64_t m = 64;
  const std::int64_t n = 96;
  const std::int64_t k = 128;
  const Elem in = dtype == Dtype::Fp8 ? Elem::Fp8E4m3 : Elem::Bf16;
  const bool accumulate = output == GemmOutput::Fp32Accumulate;
  const Elem out = accumulate ? Elem::F32 : Elem::Bf16;
  DeviceBuffer a(in, sz(m * k));
  DeviceBuffer b(in, sz(n * k));
  DeviceBuffer c(out, sz(m * n));
  fill_random(a.get(), in, sz(m * k), 21, 1.0F, ctx.stream());
  fill_random(b.get(), in, sz(n * k), 22, 1.0F, ctx.stream());
  if (accumulate) {
    fill_random(c.get(), Elem::F32, sz(m * n), 23, 1.0F, ctx.stream());
  } else {
    poison(c, ctx.stream());
  }
  const std::vector<double> before =
      accumulate ? download(c.get(), out, sz(m * n)) : std::vector<double>(sz(m * n), 0.0);
  LtGemm gemm(dtype, m, n, k, false, output, recipe);
  if (dtype == Dtype::Fp8) {
    gemm.use_unit_scales();
  }
  gemm.select_algo(ctx.lt(), GpuContext::kLtWorkspaceBytes);
  gemm.run(ctx.lt(), ctx.stream(), a.get(), b.get(), c.get(), ctx.lt_workspace(0));
  std::vector<double> want = gemm_tn_reference(m, n, k, download(a.get(), in, sz(m * k)),
                                               download(b.get(), in, sz(n * k)));
  if (gemm.spec().d_transposed) {  // the blockwise recipe writes the output transposed
    want = transposed(want, m, n);
  }
  for (std::size_t i = 0; i < want.size(); ++i) {
    want[i] += before[i];
  }
  return judge("C", download(c.get(), out, sz(m * n)), want, kGemmTolerance, detail);
}

std::vector<double> slice(const std::vector<double>& v, std::size_t offset, std::size_t count) {
  return {v.begin() + static_cast<std::ptrdiff_t>(offset),
          v.begin() + static_cast<std::ptrdiff_t>(offset + count)};
}

bool experts_check(GpuContext& ctx, ExpertImpl impl, Dtype dtype, Pass pass, std::string& detail) {
  ExpertProblem p{dtype, pass, 64, 128, tokens_per_expert(4, 32, "ramp2.0")};
  if (dtype == Dtype::Fp8) {
    for (std::int64_t& t : p.tokens) {
      t = (t + 15) / 16 * 16;  // FP8 GEMMs need 16-aligned token counts (TE pads them too)
    }
  }
  ExpertRunner runner(ctx, impl, p);
  poison(runner.c(), ctx.stream());
  runner.run();
  const Elem in = dtype == Dtype::Fp8 ? Elem::Fp8E4m3 : Elem::Bf16;
  const auto a = download(runner.a().get(), in, runner.a().bytes() / elem_bytes(in));
  const auto b = download(runner.b().get(), in, runner.b().bytes() / elem_bytes(in));
  const auto c = download(runner.c().get(), Elem::Bf16, runner.c().bytes() / 2);
  bool ok = true;
  for (std::size_t e = 0; e < runner.shapes().size(); ++e) {
    const ExpertGemmShape& s = runner.shapes()[e];
    const auto want = gemm_tn_reference(s.m, s.n, s.k, slice(a, s.a_offset, sz(s.m * s.k)),
                                        slice(b, s.b_offset, sz(s.n * s.k)));
    ok = judge(fmt::format("group {}", e), slice(c, s.c_offset, sz(s.m * s.n)), want,
               kGemmTolerance, detail) &&
         ok;
  }
  return ok;
}

/// BSHD device layout → dense BHSD for the reference.
std::vector<double> to_bhsd(const std::vector<double>& bshd, std::int64_t b, std::int64_t h,
                            std::int64_t s, std::int64_t d) {
  std::vector<double> out(bshd.size());
  for (std::int64_t ib = 0; ib < b; ++ib) {
    for (std::int64_t is = 0; is < s; ++is) {
      for (std::int64_t ih = 0; ih < h; ++ih) {
        for (std::int64_t id = 0; id < d; ++id) {
          out[sz(((ib * h + ih) * s + is) * d + id)] = bshd[sz(((ib * s + is) * h + ih) * d + id)];
        }
      }
    }
  }
  return out;
}

bool attn_check(GpuContext& ctx, AttnPlanCache& cache, const SdpaShape& s, std::string& detail) {
  AttnRunner runner(ctx, cache, s, Pass::Bwd, 5);
  poison(runner.o(), ctx.stream());
  poison(runner.stats(), ctx.stream());
  runner.run_forward();
  const auto get = [](const DeviceBuffer& buf, Elem e) {
    return download(buf.get(), e, buf.bytes() / elem_bytes(e));
  };
  const auto q = to_bhsd(get(runner.q(), Elem::Bf16), s.b, s.h_q, s.s_q, s.d_qk);
  const auto k = to_bhsd(get(runner.k(), Elem::Bf16), s.b, s.h_k, s.s_kv, s.d_qk);
  const auto v = to_bhsd(get(runner.v(), Elem::Bf16), s.b, s.h_k, s.s_kv, s.d_v);
  const auto d_o = to_bhsd(get(runner.d_o(), Elem::Bf16), s.b, s.h_q, s.s_q, s.d_v);
  const AttnShape ref{
      s.b, s.h_q, s.h_k, s.s_q, s.s_kv, s.d_qk, s.d_v, s.mask, static_cast<double>(s.scale)};
  const AttnForward fwd = attn_forward_reference(ref, q, k, v);
  bool ok = judge("O", to_bhsd(get(runner.o(), Elem::Bf16), s.b, s.h_q, s.s_q, s.d_v), fwd.o,
                  kAttnFwdTolerance, detail);
  ok = judge("Stats", get(runner.stats(), Elem::F32), fwd.stats, kAttnFwdTolerance, detail) && ok;
  poison(runner.dq(), ctx.stream());
  poison(runner.dk(), ctx.stream());
  poison(runner.dv(), ctx.stream());
  runner.run();
  const AttnGrads g = attn_backward_reference(ref, q, k, v, d_o);
  ok = judge("dQ", to_bhsd(get(runner.dq(), Elem::Bf16), s.b, s.h_q, s.s_q, s.d_qk), g.dq,
             kAttnBwdTolerance, detail) &&
       ok;
  ok = judge("dK", to_bhsd(get(runner.dk(), Elem::Bf16), s.b, s.h_k, s.s_kv, s.d_qk), g.dk,
             kAttnBwdTolerance, detail) &&
       ok;
  ok = judge("dV", to_bhsd(get(runner.dv(), Elem::Bf16), s.b, s.h_k, s.s_kv, s.d_v), g.dv,
             kAttnBwdTolerance, detail) &&
       ok;
  return ok;
}

}  // namespace

std::vector<SdpaShape> attention_check_shapes() {
  const auto shape = [](std::int64_t h_k, std::int64_t s_q, std::int64_t s_kv, std::int64_t d,
                        Mask mask) {
    return SdpaShape{1,   2,    h_k,
                     s_q, s_kv, d,
                     d,   mask, static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)))};
  };
  return {shape(2, 128, 128, 64, Mask::None),
          shape(2, 256, 256, 128, Mask::CausalTopLeft),
          shape(1, 256, 256, 128, Mask::CausalTopLeft),
          shape(1, 128, 256, 128, Mask::CausalBottomRight),
          shape(2, 256, 128, 64, Mask::None),
          shape(1, 128, 256, 64, Mask::None)};
}

std::vector<CheckResult> run_checks(GpuContext& ctx, AttnPlanCache& cache, Suite suite) {
  std::vector<CheckResult> out;
  if (suite_includes(suite, Op::Gemm)) {
    for (Dtype d : {Dtype::Bf16, Dtype::Fp8}) {
      for (GemmOutput o : {GemmOutput::Bf16, GemmOutput::Fp32Accumulate}) {
        const bool wgrad = o == GemmOutput::Fp32Accumulate;
        out.push_back(guarded(
            Op::Gemm, fmt::format("gemm {} 64x96x128{}", to_string(d), wgrad ? " wgrad" : ""),
            [&](std::string& detail) { return gemm_check(ctx, d, o, Fp8Recipe::Tensor, detail); }));
        out.back().dtype = d;
      }
    }
    // Blockwise FP8 (1x128 / 128x128 scales): its own check, covering its own tables only.
    out.push_back(guarded(Op::Gemm, "gemm fp8 64x96x128 blk128", [&](std::string& detail) {
      return gemm_check(ctx, Dtype::Fp8, GemmOutput::Bf16, Fp8Recipe::Block128, detail);
    }));
    out.back().dtype = Dtype::Fp8;
    out.back().impl = gemm_impl(Fp8Recipe::Block128);
  }
  if (suite_includes(suite, Op::GroupedGemm)) {
    const std::vector<std::pair<ExpertImpl, Dtype>> impls{
        {ExpertImpl::LoopOneStream, Dtype::Bf16},
        {ExpertImpl::LoopFourStreams, Dtype::Bf16},
        {ExpertImpl::CublasGroupedEx, Dtype::Bf16},
        {ExpertImpl::LoopOneStream, Dtype::Fp8},
        {ExpertImpl::LoopFourStreams, Dtype::Fp8}};
    const char* names[] = {"lt_loop_1s", "lt_loop_4s", "cublas_grouped_ex"};
    for (const auto& [impl, dtype] : impls) {
      for (Pass pass : {Pass::Fwd, Pass::Bwd}) {
        const std::string name =
            fmt::format("experts {} {} {} (4 experts, ramp2.0)", names[static_cast<int>(impl)],
                        to_string(dtype), to_string(pass));
        out.push_back(
            guarded(Op::GroupedGemm, name, [&, impl = impl, dtype = dtype](std::string& detail) {
              return experts_check(ctx, impl, dtype, pass, detail);
            }));
        out.back().dtype = dtype;
      }
    }
  }
  if (suite_includes(suite, Op::Memory)) {
    const std::vector<CheckResult> memory = memory_checks(ctx);
    out.insert(out.end(), memory.begin(), memory.end());
  }
  if (suite_includes(suite, Op::Attn)) {
    for (const SdpaShape& s : attention_check_shapes()) {
      out.push_back(
          guarded(Op::Attn, "attention fwd+bwd " + s.describe(),
                  [&](std::string& detail) { return attn_check(ctx, cache, s, detail); }));
    }
  }
  return out;
}

}  // namespace hopsim::calib
