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

// Bytes per element of each recipe's casts (kernel_class.hpp): a BF16 read is 2, an FP8
// write 1. cast_transpose: read, write two copies (4); deepseek: read and write one copy
// forward (3), backward the cached copy cast back and recast per channel and transposed (6),
// the output gradient cast per token and per channel (6); current: an amax read first (2 more
// each way); mxfp8: two copies and one 1-byte scale per 32 elements of each (4 + 2/32);
// nvfp4: an amax read (2), then a read and two half-byte copies with a 1-byte scale per 16
// elements of each (2 + 2 x (0.5 + 1/16)); its global FP32 scales are a few bytes per tensor.
// The weights' copies: two FP8 bytes per parameter (per-tensor or per-128x128-block scales:
// nothing per element), MXFP8's with a scale per 32 elements each (2 + 2/32), NVFP4's two
// half bytes with one E4M3 scale per 16 x 16 block each (1 + 2/256).
constexpr std::array<Fp8RecipeRow, 5> kFp8Recipes{{
    {Fp8Recipe::CastTranspose, "cast_transpose", 4, 0, 4, 2},
    {Fp8Recipe::DeepSeek, "deepseek", 3, 6, 6, 2},
    {Fp8Recipe::Current, "current", 6, 0, 6, 2},
    {Fp8Recipe::Mxfp8, "mxfp8", 4.0625, 0, 4.0625, 2.0625},
    {Fp8Recipe::Nvfp4, "nvfp4", 5.125, 0, 5.125, 1.0078125},
}};

constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < kFp8Recipes.size(); ++i) {
    if (static_cast<std::size_t>(kFp8Recipes[i].recipe) != i) {
      return false;
    }
  }
  return true;
}
static_assert(rows_in_order(), "kFp8Recipes in Fp8Recipe's order");

constexpr std::array<std::string_view, kFp8Recipes.size()> kFp8RecipeNames{
    kFp8Recipes[0].name, kFp8Recipes[1].name, kFp8Recipes[2].name, kFp8Recipes[3].name,
    kFp8Recipes[4].name};

}  // namespace

const Fp8RecipeRow& fp8_recipe_row(Fp8Recipe r) { return kFp8Recipes[static_cast<std::size_t>(r)]; }

std::string_view fp8_recipe_name(Fp8Recipe r) { return fp8_recipe_row(r).name; }

std::optional<Fp8Recipe> fp8_recipe_named(std::string_view name) {
  return enum_named<Fp8Recipe>(kFp8RecipeNames, name);
}

}  // namespace hopsim::work
