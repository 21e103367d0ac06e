// Kernel class names (kernel_class.hpp).
#include "workloads/compute/kernel_class.hpp"

namespace hopsim::work {

std::string_view kernel_class_name(KernelClass k) {
  constexpr std::array<std::string_view, kKernelClasses> kNames{
      "gemm_fprop",    "gemm_dgrad",    "gemm_wgrad", "grouped_gemm_fprop",
      "grouped_gemm_dgrad", "grouped_gemm_wgrad", "attention_fwd", "attention_bwd",
      "attention_bwd_prep", "fp8_cast", "norm", "rotary", "swiglu", "residual", "router",
      "permute", "cross_entropy", "other"};
  return kNames[static_cast<std::size_t>(k)];
}

static_assert(static_cast<std::size_t>(KernelClass::Other) + 1 == kKernelClasses);

}  // namespace hopsim::work
