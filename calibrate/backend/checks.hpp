// Correctness checks run before timing: device results against the FP64 CPU references on
// small shapes (GEMM, expert GEMMs in every implementation, attention forward and backward).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/backend/attention.hpp"
#include "calibrate/backend/context.hpp"
#include "calibrate/core/types.hpp"

namespace hopsim::calib {

struct CheckResult {
  Op op = Op::Gemm;
  std::string name;
  bool passed = false;
  std::string detail;
  /// The dtype the check covers; none: every dtype of `op` (a failure skips them all).
  std::optional<Dtype> dtype;
  /// The implementation the check covers ("cublaslt_blk128"); empty: every one of op and dtype.
  std::string impl;
};

/// The attention shapes checked: b=1, h_q=2 (h_k 2 or 1 for GQA), s 128..256, d 64/128, all masks.
std::vector<SdpaShape> attention_check_shapes();

/// Runs the checks of the ops in `suite`; never throws for a failing kernel (it fails the check).
std::vector<CheckResult> run_checks(GpuContext& ctx, AttnPlanCache& cache, Suite suite);

/// The memory-bound kernels' checks, each kernel and pass on a small shape (memory_checks.cpp).
std::vector<CheckResult> memory_checks(GpuContext& ctx);

/// Runs `body` as the check `name` of `op`; an exception fails it with its message.
CheckResult guarded(Op op, const std::string& name, const std::function<bool(std::string&)>& body);

/// Tolerances on max |got − want| / max |want| (BF16 outputs; FP32 accumulation).
inline constexpr double kGemmTolerance = 1e-2;
inline constexpr double kAttnFwdTolerance = 2e-2;
inline constexpr double kAttnBwdTolerance = 5e-2;

}  // namespace hopsim::calib
