// The memory-bound kernels against FP64 host references on small shapes (checks.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "calibrate/backend/checks.hpp"
#include "calibrate/backend/cuda_check.hpp"
#include "calibrate/backend/memory.hpp"

namespace hopsim::calib {
namespace {

constexpr std::int64_t kRows = 64;

std::size_t sz(std::int64_t v) {
  return static_cast<std::size_t>(v);
}

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

std::vector<std::int32_t> download_ints(const DeviceBuffer& b, std::size_t count) {
  std::vector<std::int32_t> out(count);
  HOPSIM_CUDA_CHECK(
      cudaMemcpy(out.data(), b.get(), count * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
  return out;
}

struct Case {
  MemoryKernel kernel;
  Pass pass;
  std::int64_t width;
};

// Runs the kernel once and compares its outputs with the host reference.
bool check_one(GpuContext& ctx, const Case& c, std::string& detail) {
  const MemoryRunner run(ctx, c.kernel, c.pass, kRows, c.width);
  run.run();
  HOPSIM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  const std::int64_t w = c.width;
  const std::size_t rw = sz(kRows * w);
  const auto in = [&](std::size_t i, Elem e, std::size_t n) { return download(run.in(i).get(), e, n); };
  const auto out = [&](std::size_t i, Elem e, std::size_t n) {
    return download(run.out(i).get(), e, n);
  };
  const bool fwd = c.pass == Pass::Fwd;
  std::vector<double> want;
  switch (c.kernel) {
    case MemoryKernel::Norm: {
      const std::vector<double> x = in(0, Elem::Bf16, rw);
      if (fwd) {
        const std::vector<double> wt = in(1, Elem::Bf16, sz(w));
        std::vector<double> rstd(sz(kRows));
        for (std::size_t r = 0; r < sz(kRows); ++r) {
          double ss = 0;
          for (std::size_t i = 0; i < sz(w); ++i) {
            ss += x[r * sz(w) + i] * x[r * sz(w) + i];
          }
          rstd[r] = 1 / std::sqrt(ss / static_cast<double>(w) + 1e-6);
          for (std::size_t i = 0; i < sz(w); ++i) {
            want.push_back(x[r * sz(w) + i] * rstd[r] * wt[i]);
          }
        }
        const bool ok = judge("y", out(0, Elem::Bf16, rw), want, kMemoryTolerance, detail);
        return judge("rstd", out(1, Elem::F32, sz(kRows)), rstd, kMemoryTolerance, detail) && ok;
      }
      const std::vector<double> dy = in(1, Elem::Bf16, rw);
      const std::vector<double> wt = in(2, Elem::Bf16, sz(w));
      const std::vector<double> rstd = in(3, Elem::F32, sz(kRows));
      for (std::size_t r = 0; r < sz(kRows); ++r) {
        double dot = 0;
        for (std::size_t i = 0; i < sz(w); ++i) {
          dot += dy[r * sz(w) + i] * wt[i] * x[r * sz(w) + i];
        }
        const double mean = dot / static_cast<double>(w);
        for (std::size_t i = 0; i < sz(w); ++i) {
          const double g = dy[r * sz(w) + i] * wt[i];
          want.push_back(rstd[r] * (g - x[r * sz(w) + i] * rstd[r] * rstd[r] * mean));
        }
      }
      return judge("dx", out(0, Elem::Bf16, rw), want, kMemoryTolerance, detail);
    }
    case MemoryKernel::Residual: {
      const std::vector<double> a = in(0, Elem::Bf16, rw);
      const std::vector<double> b = in(1, Elem::Bf16, rw);
      for (std::size_t i = 0; i < rw; ++i) {
        want.push_back(a[i] + b[i]);
      }
      return judge("c", out(0, Elem::Bf16, rw), want, kMemoryTolerance, detail);
    }
    case MemoryKernel::Rotary: {
      const std::vector<double> x = in(0, Elem::Bf16, rw);
      want.resize(rw);
      for (std::size_t r = 0; r < sz(kRows); ++r) {
        for (std::size_t p = 0; p < sz(w) / 2; ++p) {
          const double j = static_cast<double>(p % 32);
          const double angle = (fwd ? 1.0 : -1.0) * static_cast<double>(r) *
                               std::pow(10000.0, -2.0 * j / 64.0);
          const double a = x[r * sz(w) + 2 * p];
          const double b = x[r * sz(w) + 2 * p + 1];
          want[r * sz(w) + 2 * p] = a * std::cos(angle) - b * std::sin(angle);
          want[r * sz(w) + 2 * p + 1] = a * std::sin(angle) + b * std::cos(angle);
        }
      }
      return judge("y", out(0, Elem::Bf16, rw), want, kMemoryTolerance, detail);
    }
    case MemoryKernel::SwiGlu: {
      const std::vector<double> gu = in(0, Elem::Bf16, 2 * rw);
      const std::vector<double> dy = fwd ? std::vector<double>() : in(1, Elem::Bf16, rw);
      want.resize(fwd ? rw : 2 * rw);
      for (std::size_t r = 0; r < sz(kRows); ++r) {
        for (std::size_t i = 0; i < sz(w); ++i) {
          const double g = gu[r * 2 * sz(w) + i];
          const double u = gu[r * 2 * sz(w) + sz(w) + i];
          const double s = sigmoid(g);
          if (fwd) {
            want[r * sz(w) + i] = g * s * u;
          } else {
            const double d = dy[r * sz(w) + i];
            want[r * 2 * sz(w) + i] = d * u * s * (1 + g * (1 - s));
            want[r * 2 * sz(w) + sz(w) + i] = d * g * s;
          }
        }
      }
      return judge(fwd ? "y" : "dgate|dup", out(0, Elem::Bf16, want.size()), want,
                   kMemoryTolerance, detail);
    }
    case MemoryKernel::Fp8Cast: {
      const std::vector<double> x = in(0, Elem::Bf16, rw);
      const std::vector<double> q = out(0, Elem::Fp8E4m3, rw);
      const std::vector<double> qt = out(1, Elem::Fp8E4m3, rw);
      const std::vector<double> scales = out(2, Elem::F32, rw / 128);
      std::vector<double> dequant(rw);
      std::vector<double> transposed(rw);
      for (std::size_t r = 0; r < sz(kRows); ++r) {
        for (std::size_t i = 0; i < sz(w); ++i) {
          dequant[r * sz(w) + i] = q[r * sz(w) + i] * scales[r * (sz(w) / 128) + i / 128];
          transposed[r * sz(w) + i] = qt[i * sz(kRows) + r];
        }
      }
      const bool ok = judge("dequantized", dequant, x, kFp8Tolerance, detail);
      return judge("transposed", transposed, q, 0.0, detail) && ok;
    }
    case MemoryKernel::Router: {
      const std::vector<double> a = in(0, Elem::F32, rw);
      if (!fwd) {
        const std::vector<double> d = in(1, Elem::F32, rw);
        for (std::size_t r = 0; r < sz(kRows); ++r) {
          double dot = 0;
          for (std::size_t i = 0; i < sz(w); ++i) {
            dot += a[r * sz(w) + i] * d[r * sz(w) + i];
          }
          for (std::size_t i = 0; i < sz(w); ++i) {
            want.push_back(a[r * sz(w) + i] * (d[r * sz(w) + i] - dot));
          }
        }
        return judge("dlogits", out(0, Elem::F32, rw), want, 1e-4, detail);
      }
      std::vector<double> top;
      for (std::size_t r = 0; r < sz(kRows); ++r) {
        const auto row = a.begin() + static_cast<std::ptrdiff_t>(r * sz(w));
        const double m = *std::max_element(row, row + w);
        double sum = 0;
        for (std::size_t i = 0; i < sz(w); ++i) {
          sum += std::exp(a[r * sz(w) + i] - m);
        }
        std::vector<double> p;
        for (std::size_t i = 0; i < sz(w); ++i) {
          p.push_back(std::exp(a[r * sz(w) + i] - m) / sum);
        }
        want.insert(want.end(), p.begin(), p.end());
        std::sort(p.rbegin(), p.rend());
        top.insert(top.end(), p.begin(), p.begin() + 8);
      }
      const std::vector<double> probs = out(0, Elem::F32, rw);
      const std::vector<std::int32_t> ids = download_ints(run.out(1), sz(kRows * 8));
      std::vector<double> at_ids;
      for (std::size_t k = 0; k < ids.size(); ++k) {
        at_ids.push_back(probs[(k / 8) * sz(w) + sz(ids[k])]);
      }
      bool ok = judge("probs", probs, want, 1e-4, detail);
      ok = judge("top-8 weights", out(2, Elem::F32, sz(kRows * 8)), top, 1e-4, detail) && ok;
      return judge("top-8 ids", at_ids, top, 1e-4, detail) && ok;
    }
    case MemoryKernel::Permute: {
      const Elem e = fwd ? Elem::Fp8E4m3 : Elem::Bf16;
      const std::vector<double> rows = in(0, e, rw);
      for (std::size_t r = 0; r < sz(kRows); ++r) {
        const auto src = sz(run.ids()[r]);
        want.insert(want.end(), rows.begin() + static_cast<std::ptrdiff_t>(src * sz(w)),
                    rows.begin() + static_cast<std::ptrdiff_t>((src + 1) * sz(w)));
      }
      return judge("rows", out(0, e, rw), want, 0.0, detail);
    }
    case MemoryKernel::AttnBwdPrep: {
      const std::vector<double> o = in(0, Elem::Bf16, rw * 128);
      const std::vector<double> d_o = in(1, Elem::Bf16, rw * 128);
      const std::vector<double> acc = in(2, Elem::F32, rw * 128);
      for (std::size_t pair = 0; pair < rw; ++pair) {
        double sum = 0;
        for (std::size_t d = 0; d < 128; ++d) {
          sum += o[pair * 128 + d] * d_o[pair * 128 + d];
        }
        want.push_back(sum);
      }
      const bool ok = judge("delta", out(0, Elem::F32, rw), want, 1e-4, detail);
      return judge("dQ", out(1, Elem::Bf16, rw * 128), acc, kMemoryTolerance, detail) && ok;
    }
  }
  return false;
}

}  // namespace

std::vector<CheckResult> memory_checks(GpuContext& ctx) {
  const std::vector<Case> cases{
      {MemoryKernel::Norm, Pass::Fwd, 512},      {MemoryKernel::Norm, Pass::Bwd, 512},
      {MemoryKernel::Residual, Pass::Fwd, 512},  {MemoryKernel::Rotary, Pass::Fwd, 256},
      {MemoryKernel::Rotary, Pass::Bwd, 256},    {MemoryKernel::SwiGlu, Pass::Fwd, 256},
      {MemoryKernel::SwiGlu, Pass::Bwd, 256},    {MemoryKernel::Fp8Cast, Pass::Fwd, 256},
      {MemoryKernel::Router, Pass::Fwd, 256},    {MemoryKernel::Router, Pass::Bwd, 256},
      {MemoryKernel::Permute, Pass::Fwd, 512},   {MemoryKernel::Permute, Pass::Bwd, 512},
      {MemoryKernel::AttnBwdPrep, Pass::Bwd, 4}};
  std::vector<CheckResult> out;
  for (const Case& c : cases) {
    const std::string name = fmt::format("memory {} {} ({} x {})", to_string(c.kernel),
                                         to_string(c.pass), kRows, c.width);
    out.push_back(guarded(Op::Memory, name,
                          [&](std::string& detail) { return check_one(ctx, c, detail); }));
  }
  return out;
}

}  // namespace hopsim::calib
