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

// Row r of x (rows of w) through a softmax, shifted by the row's maximum.
std::vector<double> softmax_row(const std::vector<double>& x, std::size_t r, std::size_t w) {
  const auto row = x.begin() + static_cast<std::ptrdiff_t>(r * w);
  const double m = *std::max_element(row, row + static_cast<std::ptrdiff_t>(w));
  double sum = 0;
  for (std::size_t i = 0; i < w; ++i) {
    sum += std::exp(x[r * w + i] - m);
  }
  std::vector<double> p;
  for (std::size_t i = 0; i < w; ++i) {
    p.push_back(std::exp(x[r * w + i] - m) / sum);
  }
  return p;
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

// A kernel run once on kRows rows, with its inputs and outputs read back.
struct Ran {
  const MemoryRunner& run;
  std::size_t w;   ///< width
  std::size_t rw;  ///< rows x width
  bool fwd;
  std::vector<double> in(std::size_t i, Elem e, std::size_t n) const {
    return download(run.in(i).get(), e, n);
  }
  std::vector<double> out(std::size_t i, Elem e, std::size_t n) const {
    return download(run.out(i).get(), e, n);
  }
};

bool check_norm(const Ran& k, std::string& detail) {
  const std::size_t w = k.w;
  const std::vector<double> x = k.in(0, Elem::Bf16, k.rw);
  std::vector<double> want;
  if (k.fwd) {
    const std::vector<double> wt = k.in(1, Elem::Bf16, w);
    std::vector<double> rstd(sz(kRows));
    for (std::size_t r = 0; r < sz(kRows); ++r) {
      double ss = 0;
      for (std::size_t i = 0; i < w; ++i) {
        ss += x[r * w + i] * x[r * w + i];
      }
      rstd[r] = 1 / std::sqrt(ss / static_cast<double>(w) + 1e-6);
      for (std::size_t i = 0; i < w; ++i) {
        want.push_back(x[r * w + i] * rstd[r] * wt[i]);
      }
    }
    const bool ok = judge("y", k.out(0, Elem::Bf16, k.rw), want, kMemoryTolerance, detail);
    return judge("rstd", k.out(1, Elem::F32, sz(kRows)), rstd, kMemoryTolerance, detail) && ok;
  }
  const std::vector<double> dy = k.in(1, Elem::Bf16, k.rw);
  const std::vector<double> wt = k.in(2, Elem::Bf16, w);
  const std::vector<double> rstd = k.in(3, Elem::F32, sz(kRows));
  for (std::size_t r = 0; r < sz(kRows); ++r) {
    double dot = 0;
    for (std::size_t i = 0; i < w; ++i) {
      dot += dy[r * w + i] * wt[i] * x[r * w + i];
    }
    const double mean = dot / static_cast<double>(w);
    for (std::size_t i = 0; i < w; ++i) {
      const double g = dy[r * w + i] * wt[i];
      want.push_back(rstd[r] * (g - x[r * w + i] * rstd[r] * rstd[r] * mean));
    }
  }
  return judge("dx", k.out(0, Elem::Bf16, k.rw), want, kMemoryTolerance, detail);
}

bool check_residual(const Ran& k, std::string& detail) {
  const std::vector<double> a = k.in(0, Elem::Bf16, k.rw);
  const std::vector<double> b = k.in(1, Elem::Bf16, k.rw);
  std::vector<double> want;
  for (std::size_t i = 0; i < k.rw; ++i) {
    want.push_back(a[i] + b[i]);
  }
  return judge("c", k.out(0, Elem::Bf16, k.rw), want, kMemoryTolerance, detail);
}

bool check_rotary(const Ran& k, std::string& detail) {
  const std::size_t w = k.w;
  const std::vector<double> x = k.in(0, Elem::Bf16, k.rw);
  std::vector<double> want(k.rw);
  for (std::size_t r = 0; r < sz(kRows); ++r) {
    for (std::size_t p = 0; p < w / 2; ++p) {
      const double j = static_cast<double>(p % 32);
      const double angle =
          (k.fwd ? 1.0 : -1.0) * static_cast<double>(r) * std::pow(10000.0, -2.0 * j / 64.0);
      const double a = x[r * w + 2 * p];
      const double b = x[r * w + 2 * p + 1];
      want[r * w + 2 * p] = a * std::cos(angle) - b * std::sin(angle);
      want[r * w + 2 * p + 1] = a * std::sin(angle) + b * std::cos(angle);
    }
  }
  return judge("y", k.out(0, Elem::Bf16, k.rw), want, kMemoryTolerance, detail);
}

bool check_swiglu(const Ran& k, std::string& detail) {
  const std::size_t w = k.w;
  const std::vector<double> gu = k.in(0, Elem::Bf16, 2 * k.rw);
  const std::vector<double> dy = k.fwd ? std::vector<double>() : k.in(1, Elem::Bf16, k.rw);
  std::vector<double> want(k.fwd ? k.rw : 2 * k.rw);
  for (std::size_t r = 0; r < sz(kRows); ++r) {
    for (std::size_t i = 0; i < w; ++i) {
      const double g = gu[r * 2 * w + i];
      const double u = gu[r * 2 * w + w + i];
      const double s = sigmoid(g);
      if (k.fwd) {
        want[r * w + i] = g * s * u;
      } else {
        const double d = dy[r * w + i];
        want[r * 2 * w + i] = d * u * s * (1 + g * (1 - s));
        want[r * 2 * w + w + i] = d * g * s;
      }
    }
  }
  return judge(k.fwd ? "y" : "dgate|dup", k.out(0, Elem::Bf16, want.size()), want,
               kMemoryTolerance, detail);
}

bool check_fp8_cast(const Ran& k, std::string& detail) {
  const std::size_t w = k.w;
  const std::vector<double> x = k.in(0, Elem::Bf16, k.rw);
  const std::vector<double> q = k.out(0, Elem::Fp8E4m3, k.rw);
  const std::vector<double> qt = k.out(1, Elem::Fp8E4m3, k.rw);
  const std::vector<double> scales = k.out(2, Elem::F32, k.rw / 128);
  std::vector<double> dequant(k.rw);
  std::vector<double> transposed(k.rw);
  for (std::size_t r = 0; r < sz(kRows); ++r) {
    for (std::size_t i = 0; i < w; ++i) {
      dequant[r * w + i] = q[r * w + i] * scales[r * (w / 128) + i / 128];
      transposed[r * w + i] = qt[i * sz(kRows) + r];
    }
  }
  const bool ok = judge("dequantized", dequant, x, kFp8Tolerance, detail);
  return judge("transposed", transposed, q, 0.0, detail) && ok;
}

bool check_router(const Ran& k, std::string& detail) {
  const std::size_t w = k.w;
  const std::vector<double> a = k.in(0, Elem::F32, k.rw);
  std::vector<double> want;
  if (!k.fwd) {
    const std::vector<double> d = k.in(1, Elem::F32, k.rw);
    for (std::size_t r = 0; r < sz(kRows); ++r) {
      double dot = 0;
      for (std::size_t i = 0; i < w; ++i) {
        dot += a[r * w + i] * d[r * w + i];
      }
      for (std::size_t i = 0; i < w; ++i) {
        want.push_back(a[r * w + i] * (d[r * w + i] - dot));
      }
    }
    return judge("dlogits", k.out(0, Elem::F32, k.rw), want, 1e-4, detail);
  }
  std::vector<double> top;
  for (std::size_t r = 0; r < sz(kRows); ++r) {
    std::vector<double> p = softmax_row(a, r, w);
    want.insert(want.end(), p.begin(), p.end());
    std::sort(p.rbegin(), p.rend());
    top.insert(top.end(), p.begin(), p.begin() + 8);
  }
  const std::vector<double> probs = k.out(0, Elem::F32, k.rw);
  const std::vector<std::int32_t> ids = download_ints(k.run.out(1), sz(kRows * 8));
  std::vector<double> at_ids;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    at_ids.push_back(probs[(i / 8) * w + sz(ids[i])]);
  }
  bool ok = judge("probs", probs, want, 1e-4, detail);
  ok = judge("top-8 weights", k.out(2, Elem::F32, sz(kRows * 8)), top, 1e-4, detail) && ok;
  return judge("top-8 ids", at_ids, top, 1e-4, detail) && ok;
}

bool check_permute(const Ran& k, std::string& detail) {
  const Elem e = k.fwd ? Elem::Fp8E4m3 : Elem::Bf16;
  const std::vector<double> rows = k.in(0, e, k.rw);
  std::vector<double> want;
  for (std::size_t r = 0; r < sz(kRows); ++r) {
    const auto src = static_cast<std::ptrdiff_t>(sz(k.run.ids()[r]) * k.w);
    want.insert(want.end(), rows.begin() + src,
                rows.begin() + src + static_cast<std::ptrdiff_t>(k.w));
  }
  return judge("rows", k.out(0, e, k.rw), want, 0.0, detail);
}

bool check_attn_bwd_prep(const Ran& k, std::string& detail) {
  const std::vector<double> o = k.in(0, Elem::Bf16, k.rw * 128);
  const std::vector<double> d_o = k.in(1, Elem::Bf16, k.rw * 128);
  const std::vector<double> acc = k.in(2, Elem::F32, k.rw * 128);
  std::vector<double> want;
  for (std::size_t pair = 0; pair < k.rw; ++pair) {
    double sum = 0;
    for (std::size_t d = 0; d < 128; ++d) {
      sum += o[pair * 128 + d] * d_o[pair * 128 + d];
    }
    want.push_back(sum);
  }
  const bool ok = judge("delta", k.out(0, Elem::F32, k.rw), want, 1e-4, detail);
  return judge("dQ", k.out(1, Elem::Bf16, k.rw * 128), acc, kMemoryTolerance, detail) && ok;
}

bool check_cross_entropy(const Ran& k, std::string& detail) {
  const std::size_t w = k.w;
  const std::vector<double> x = k.in(0, Elem::Bf16, k.rw);
  std::vector<double> want;
  if (!k.fwd) {
    const std::vector<double> dloss = k.in(1, Elem::F32, sz(kRows));
    for (std::size_t i = 0; i < k.rw; ++i) {
      want.push_back(x[i] * dloss[i / w]);
    }
    return judge("dlogits", k.out(0, Elem::Bf16, k.rw), want, kMemoryTolerance, detail);
  }
  std::vector<double> loss;
  for (std::size_t r = 0; r < sz(kRows); ++r) {
    const std::vector<double> p = softmax_row(x, r, w);
    const auto t = sz(k.run.ids()[r]);
    loss.push_back(-std::log(p[t]));  // log(sum of exp) - x[t]
    for (std::size_t i = 0; i < w; ++i) {
      want.push_back(p[i] - (i == t ? 1.0 : 0.0));
    }
  }
  const bool ok = judge("dlogits", k.out(0, Elem::Bf16, k.rw), want, kMemoryTolerance, detail);
  return judge("loss", k.out(1, Elem::F32, sz(kRows)), loss, 1e-4, detail) && ok;
}

// Runs the kernel once and compares its outputs with the host reference.
bool check_one(GpuContext& ctx, const Case& c, std::string& detail) {
  const MemoryRunner run(ctx, c.kernel, c.pass, kRows, c.width);
  run.run();
  HOPSIM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  const Ran k{run, sz(c.width), sz(kRows * c.width), c.pass == Pass::Fwd};
  switch (c.kernel) {
    case MemoryKernel::Norm:
      return check_norm(k, detail);
    case MemoryKernel::Residual:
      return check_residual(k, detail);
    case MemoryKernel::Rotary:
      return check_rotary(k, detail);
    case MemoryKernel::SwiGlu:
      return check_swiglu(k, detail);
    case MemoryKernel::Fp8Cast:
      return check_fp8_cast(k, detail);
    case MemoryKernel::Router:
      return check_router(k, detail);
    case MemoryKernel::Permute:
      return check_permute(k, detail);
    case MemoryKernel::AttnBwdPrep:
      return check_attn_bwd_prep(k, detail);
    case MemoryKernel::CrossEntropy:
      return check_cross_entropy(k, detail);
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
      {MemoryKernel::AttnBwdPrep, Pass::Bwd, 4}, {MemoryKernel::CrossEntropy, Pass::Fwd, 1000},
      {MemoryKernel::CrossEntropy, Pass::Bwd, 1000}};
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
