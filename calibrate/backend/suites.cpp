// Per-op point setup (GEMM, expert GEMMs, attention) around the shared measurement loop.
#include "calibrate/backend/suites.hpp"

#include <cmath>

#include <fmt/format.h>

#include "calibrate/backend/cuda_check.hpp"
#include "calibrate/backend/experts.hpp"
#include "calibrate/backend/lt_gemm.hpp"
#include "calibrate/backend/memory.hpp"
#include "calibrate/core/flops.hpp"
#include "calibrate/core/workload_shapes.hpp"

namespace hopsim::calib {
namespace {

std::int64_t as_int(double v) {
  return static_cast<std::int64_t>(std::llround(v));
}

std::size_t sz(std::int64_t v) {
  return static_cast<std::size_t>(v);
}

/// Operands of one dense GEMM, random and never zero. A weight gradient (Fp32Accumulate) adds
/// into a random FP32 gradient, without FP8 fast accumulation (Transformer Engine keeps it for
/// forward GEMMs).
struct GemmSetup {
  GemmSetup(GpuContext& ctx, Dtype dtype, std::int64_t m, std::int64_t n, std::int64_t k,
            GemmOutput output, Fp8Recipe recipe)
      : gemm(dtype, m, n, k, /*fast_accum=*/output == GemmOutput::Bf16, output, recipe),
        a(dtype == Dtype::Fp8 ? Elem::Fp8E4m3 : Elem::Bf16, sz(m * k)),
        b(dtype == Dtype::Fp8 ? Elem::Fp8E4m3 : Elem::Bf16, sz(n * k)),
        c(output == GemmOutput::Fp32Accumulate ? Elem::F32 : Elem::Bf16, sz(m * n)) {
    const Elem in = dtype == Dtype::Fp8 ? Elem::Fp8E4m3 : Elem::Bf16;
    fill_random(a.get(), in, sz(m * k), 31, 1.0F, ctx.stream());
    fill_random(b.get(), in, sz(n * k), 32, 1.0F, ctx.stream());
    if (output == GemmOutput::Fp32Accumulate) {
      fill_random(c.get(), Elem::F32, sz(m * n), 33, 1.0F, ctx.stream());
    }
    if (dtype == Dtype::Fp8) {
      gemm.use_unit_scales();
    }
    gemm.select_algo(ctx.lt(), GpuContext::kLtWorkspaceBytes);
  }

  void run(GpuContext& ctx) const {
    gemm.run(ctx.lt(), ctx.stream(), a.get(), b.get(), c.get(), ctx.lt_workspace(0));
  }

  LtGemm gemm;
  DeviceBuffer a, b, c;
};

Measurement timed(GpuContext& ctx, TimerBackend& timer, const std::function<void()>& op,
                  const MeasureConfig& config) {
  op();  // untimed first run: lazy loading, JIT, allocator warm-up
  HOPSIM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  Measurement m = measure(timer, op, config);
  HOPSIM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  return m;
}

}  // namespace

std::vector<std::int64_t> expert_tokens(const TableSpec& spec, const GridPoint& point) {
  std::vector<std::int64_t> tokens = tokens_per_expert(
      as_int(point.values[0]), as_int(point.values[1]), key_string(spec.key, "imbalance"));
  if (parse_dtype(key_string(spec.key, "dtype")) == Dtype::Fp8) {
    for (std::int64_t& t : tokens) {
      t = (t + 15) / 16 * 16;
    }
  }
  return tokens;
}

Measurement measure_point(GpuContext& ctx, TimerBackend& timer, SuiteState& state,
                          const TableSpec& spec, const GridPoint& point,
                          const MeasureConfig& config) {
  const Dtype dtype = parse_dtype(key_string(spec.key, "dtype"));
  switch (spec.op) {
    case Op::Gemm: {
      const GemmSetup g(ctx, dtype, as_int(point.values[0]), as_int(point.values[1]),
                        as_int(point.values[2]),
                        spec.pass == Pass::Bwd ? GemmOutput::Fp32Accumulate : GemmOutput::Bf16,
                        gemm_recipe(spec.impl));
      return timed(
          ctx, timer, [&] { g.run(ctx); }, config);
    }
    case Op::GroupedGemm: {
      ExpertProblem problem{dtype, spec.pass, key_int(spec.key, "n"), key_int(spec.key, "k"),
                            expert_tokens(spec, point)};
      ExpertRunner runner(ctx, parse_expert_impl(spec.impl), std::move(problem));
      return timed(
          ctx, timer, [&] { runner.run(); }, config);
    }
    case Op::Attn: {
      const std::int64_t bh = as_int(point.values[2]);
      const std::int64_t gqa = key_int(spec.key, "gqa");
      const std::int64_t d_qk = key_int(spec.key, "d_qk");
      const SdpaShape shape{1,
                            bh,
                            bh / gqa,
                            as_int(point.values[0]),
                            as_int(point.values[1]),
                            d_qk,
                            key_int(spec.key, "d_v"),
                            parse_mask(key_string(spec.key, "mask")),
                            static_cast<float>(1.0 / std::sqrt(static_cast<double>(d_qk)))};
      AttnRunner runner(ctx, state.attn_plans, shape, spec.pass);
      return timed(
          ctx, timer, [&] { runner.run(); }, config);
    }
    case Op::Memory: {
      const MemoryKernelRow& kernel = memory_kernel(key_string(spec.key, "kernel"));
      const std::int64_t rows = memory_rows(kernel, spec.pass, point.values[0]);
      const MemoryRunner runner(ctx, kernel, spec.pass, rows, kernel.width);
      Measurement m = timed(
          ctx, timer, [&] { runner.run(); }, config);
      // The cell is the axis's bytes; whole rows moved a little more or less: scale to it.
      const double scale = point.values[0] / rule_bytes(kernel.pass(spec.pass), rows, kernel.width);
      m.summary.median_us *= scale;
      m.summary.p10_us *= scale;
      m.summary.p90_us *= scale;
      for (double& s : m.samples_us) {
        s *= scale;
      }
      return m;
    }
  }
  throw CalibError("unknown op");
}

nlohmann::json measure_ceilings(GpuContext& ctx, TimerBackend& timer, const MeasureConfig& config) {
  nlohmann::json out = nlohmann::json::object();
  MeasureConfig quick = config;
  quick.stop.min_samples = 5;
  quick.stop.max_samples = 20;
  try {
    const std::size_t bytes = 2ULL << 30U;
    const DeviceBuffer src(bytes);
    const DeviceBuffer dst(bytes);
    HOPSIM_CUDA_CHECK(cudaMemsetAsync(src.get(), 1, bytes, ctx.stream()));
    const Measurement m = timed(
        ctx, timer,
        [&] {
          HOPSIM_CUDA_CHECK(
              cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, ctx.stream()));
        },
        quick);
    out["copy_GBps"] = std::round(2.0 * static_cast<double>(bytes) / (m.summary.median_us * 1e3));
  } catch (const std::exception& e) {
    fmt::print(stderr, "ceiling copy_GBps failed: {}\n", e.what());
  }
  for (Dtype dtype : {Dtype::Bf16, Dtype::Fp8}) {
    const std::string name = fmt::format("{}_gemm_tflops", to_string(dtype));
    try {
      const GemmSetup g(ctx, dtype, 8192, 8192, 8192, GemmOutput::Bf16, Fp8Recipe::Tensor);
      const Measurement m = timed(
          ctx, timer, [&] { g.run(ctx); }, quick);
      out[name] = std::round(gemm_flops(8192, 8192, 8192) / (m.summary.median_us * 1e6));
    } catch (const std::exception& e) {
      fmt::print(stderr, "ceiling {} failed: {}\n", name, e.what());
    }
  }
  return out;
}

}  // namespace hopsim::calib
