// The kernel classes of a training step: what a report breaks compute time down by, and what
// `hopsim explain` lists each kernel under (docs/compute-model.md).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/units.hpp"

namespace hopsim::work {

/// GEMMs by role (forward, data gradient, weight gradient), grouped GEMMs the same, attention by
/// pass, and the memory-bound kernels around them.
enum class KernelClass : std::uint8_t {
  GemmFprop,
  GemmDgrad,
  GemmWgrad,
  GroupedFprop,
  GroupedDgrad,
  GroupedWgrad,
  AttentionFwd,
  AttentionBwd,
  AttentionBwdPrep,  ///< the attention backward's pre- and post-processing (dO.O, dQ in BF16)
  Fp8Cast,           ///< quantize (and transpose) an activation or gradient to FP8
  Norm,              ///< RMSNorm
  Rotary,            ///< rotary position embedding on queries and keys
  SwiGlu,
  Residual,          ///< residual add
  Router,            ///< router softmax or sigmoid and top-k
  Permute,           ///< token permute before the grouped GEMMs, unpermute after
  Copy,              ///< a copy between layouts (MLA's key and value assembled for attention)
  CrossEntropy,      ///< the loss over the vocabulary: softmax of the logits and its gradient
  Other,             ///< anything else a plan computes (a step's optimizer)
};

inline constexpr std::size_t kKernelClasses = 19;

/// A share of the compute model's rate per kernel class (a slow GPU, another GPU model).
using KernelSpeeds = std::array<double, kKernelClasses>;
/// Every class at `v`.
constexpr KernelSpeeds speeds_at(double v) {
  KernelSpeeds s{};
  s.fill(v);
  return s;
}

/// How FP8 training casts a GEMM's operands, a row each of fp8_recipe_row's table
/// (costs/layer_kernels.hpp counts the bytes): cast_transpose is Transformer Engine's delayed
/// scaling, each input and output gradient quantized once with the last steps' amax, writing
/// the row-major copy and the transposed one the weight gradient reads (its fused
/// cast-transpose); deepseek is DeepSeek-V3's fine-grained recipe: per-token 1x128 casts for
/// the forward and the data gradient, per-channel casts with a separate transpose for the
/// weight gradient, whose input is the cached FP8 copy cast back first; current is Transformer
/// Engine's current scaling, an amax pass over the BF16 tensor before the same cast-transpose;
/// mxfp8 is Transformer Engine's MXFP8 block scaling, a row-wise and a column-wise copy with
/// one E8M0 scale per 32 elements (Blackwell's tensor cores read them; no Hopper GPU does);
/// nvfp4 is its NVFP4 block scaling: an amax pass for the tensor's FP32 scale, then a row-wise
/// and a column-wise (Hadamard-transformed) FP4 copy with one E4M3 scale per 16 elements, the
/// GEMMs on FP4 tensor cores (fp8_recipe_runs_fp4).
enum class Fp8Recipe : std::uint8_t { CastTranspose, DeepSeek, Current, Mxfp8, Nvfp4 };

/// A recipe's casts as bytes per element moved: before the forward, per element of the GEMM's
/// input (rows x k); before the backward, per element of the input (rows x k: DeepSeek's
/// cached copy cast back) and of the output gradient (rows x n); and the bytes per parameter of
/// the low-precision weight copies a GPU holds beside its BF16 weights (a copy and its
/// transpose, with their scales).
struct Fp8RecipeRow {
  Fp8Recipe recipe;
  std::string_view name;
  double fwd_input;
  double bwd_input;
  double bwd_output_grad;
  double weight_copies;
};
const Fp8RecipeRow& fp8_recipe_row(Fp8Recipe r);

/// "cast_transpose", "deepseek", "current", "mxfp8", "nvfp4".
std::string_view fp8_recipe_name(Fp8Recipe r);
/// Whether the recipe's GEMMs run on FP4 tensor cores (at the GPU's FP4 peak): nvfp4.
constexpr bool fp8_recipe_runs_fp4(Fp8Recipe r) { return r == Fp8Recipe::Nvfp4; }
std::optional<Fp8Recipe> fp8_recipe_named(std::string_view name);

/// Its name in reports and `explain`: "gemm_fprop", "grouped_gemm_wgrad", "fp8_cast", ...
std::string_view kernel_class_name(KernelClass k);

/// Whether the class is priced by bytes over HBM bandwidth (not by FLOPs).
constexpr bool memory_bound(KernelClass k) {
  return k >= KernelClass::AttentionBwdPrep && k <= KernelClass::CrossEntropy;
}

/// Compute time per kernel class, for the report's breakdown ("compute_kernels").
class KernelTally {
 public:
  void add(KernelClass k, Time time) { time_[static_cast<std::size_t>(k)] += time; }
  /// Adds `times` copies of `other`.
  void add(const KernelTally& other, std::int64_t times = 1) {
    for (std::size_t k = 0; k < time_.size(); ++k) {
      time_[k] += times * other.time_[k];
    }
  }
  Time time(KernelClass k) const { return time_[static_cast<std::size_t>(k)]; }
  /// The classes with time, in class order.
  std::vector<std::pair<KernelClass, Time>> nonzero() const {
    std::vector<std::pair<KernelClass, Time>> out;
    for (std::size_t k = 0; k < time_.size(); ++k) {
      if (time_[k] > Time{}) {
        out.emplace_back(static_cast<KernelClass>(k), time_[k]);
      }
    }
    return out;
  }
  Time total() const {
    Time sum;
    for (Time t : time_) {
      sum += t;
    }
    return sum;
  }

 private:
  std::array<Time, kKernelClasses> time_{};
};

}  // namespace hopsim::work
