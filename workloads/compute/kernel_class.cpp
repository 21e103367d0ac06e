// Kernel class names (kernel_class.hpp).
#include "workloads/compute/kernel_class.hpp"

#include "workloads/compute/enum_names.hpp"

namespace hopsim::work {

std::string_view kernel_class_name(KernelClass k) {
  constexpr std::array<std::string_view, kKernelClasses> kNames{
      "gemm_fprop",    "gemm_dgrad",    "gemm_wgrad", "grouped_gemm_fprop",
      "grouped_gemm_dgrad", "grouped_gemm_wgrad", "attention_fwd", "attention_bwd",
      "attention_bwd_prep", "fp8_cast", "norm", "rotary", "swiglu", "residual", "router",
      "permute", "copy", "cross_entropy", "other"};
  return kNames[static_cast<std::size_t>(k)];
}

static_assert(static_cast<std::size_t>(KernelClass::Other) + 1 == kKernelClasses);

namespace {
constexpr std::array<std::string_view, 2> kFp8Recipes{"cast_transpose", "deepseek"};
}  // namespace

std::string_view fp8_recipe_name(Fp8Recipe r) { return kFp8Recipes[static_cast<std::size_t>(r)]; }

std::optional<Fp8Recipe> fp8_recipe_named(std::string_view name) {
  return enum_named<Fp8Recipe>(kFp8Recipes, name);
}

}  // namespace hopsim::work
