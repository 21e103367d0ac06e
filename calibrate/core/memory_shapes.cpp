// Memory-bound kernel names, widths and bytes per row (memory_shapes.hpp).
#include "calibrate/core/memory_shapes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

namespace hopsim::calib {
namespace {

constexpr std::array<std::pair<MemoryKernel, std::string_view>, 9> kKernels{{
    {MemoryKernel::Norm, "norm"},
    {MemoryKernel::Residual, "residual"},
    {MemoryKernel::Rotary, "rotary"},
    {MemoryKernel::SwiGlu, "swiglu"},
    {MemoryKernel::Fp8Cast, "fp8_cast"},
    {MemoryKernel::Router, "router"},
    {MemoryKernel::Permute, "permute"},
    {MemoryKernel::AttnBwdPrep, "attention_bwd_prep"},
    {MemoryKernel::CrossEntropy, "cross_entropy"},
}};

}  // namespace

std::string_view to_string(MemoryKernel kernel) {
  for (const auto& [k, name] : kKernels) {
    if (k == kernel) {
      return name;
    }
  }
  return "?";
}

MemoryKernel parse_memory_kernel(std::string_view s) {
  for (const auto& [k, name] : kKernels) {
    if (name == s) {
      return k;
    }
  }
  throw CalibError("unknown memory kernel \"" + std::string(s) +
                   "\" (expected norm, residual, rotary, swiglu, fp8_cast, router, permute, "
                   "attention_bwd_prep or cross_entropy)");
}

std::int64_t memory_width(MemoryKernel kernel) {
  switch (kernel) {
    case MemoryKernel::SwiGlu:
      return 2048;
    case MemoryKernel::Rotary:
      return 128 * 64;
    case MemoryKernel::Router:
      return 256;
    case MemoryKernel::AttnBwdPrep:
      return 128;
    case MemoryKernel::CrossEntropy:
      return 128256 / 8;
    case MemoryKernel::Norm:
    case MemoryKernel::Residual:
    case MemoryKernel::Fp8Cast:
    case MemoryKernel::Permute:
      break;
  }
  return 7168;
}

double memory_row_bytes(MemoryKernel kernel, Pass pass, std::int64_t width) {
  const auto w = static_cast<double>(width);
  const bool fwd = pass == Pass::Fwd;
  switch (kernel) {
    case MemoryKernel::Norm:
      return (fwd ? 4 : 6) * w + 4;
    case MemoryKernel::Residual:
      return 6 * w;
    case MemoryKernel::Rotary:
    case MemoryKernel::Fp8Cast:
      return 4 * w;
    case MemoryKernel::SwiGlu:
      return (fwd ? 6 : 10) * w;
    case MemoryKernel::Router:
      return fwd ? 8 * w + 64 : 12 * w;
    case MemoryKernel::Permute:
      return (fwd ? 2 : 4) * w;
    case MemoryKernel::AttnBwdPrep:
      return fwd ? 0 : 1284 * w;
    case MemoryKernel::CrossEntropy:
      return fwd ? 6 * w + 8 : 4 * w + 4;
  }
  return 0;
}

std::int64_t memory_rows(MemoryKernel kernel, Pass pass, double bytes) {
  const double per_row = memory_row_bytes(kernel, pass, memory_width(kernel));
  if (per_row <= 0) {
    throw CalibError("memory kernel " + std::string(to_string(kernel)) + " has no " +
                     std::string(to_string(pass)) + " pass");
  }
  return std::max<std::int64_t>(1, std::llround(bytes / per_row));
}

}  // namespace hopsim::calib
