// The attention implementations' published rates (attention_rows.hpp).
#include "workloads/compute/attention_rows.hpp"

#include <cstddef>


namespace hopsim::work {
namespace {

// FlashAttention-2's bars in the FlashAttention-3 paper (Figs. 5 and 6).
constexpr double kFa2Fwd512 = 309, kFa2Fwd16k = 370, kFa2Bwd512 = 214, kFa2Bwd16k = 322,
                 kFa2CausalFwd16k = 335;

// pytorch/benchmark pull request #2443 ("[tritonbench] Add FlexAttention", Aug 2024): forward
// latencies in ms of SDPA, FlashAttention-2 and FlexAttention, head dim 128, 16 heads, batch x
// sequence = 16K tokens, non-causal, at (32 x 512) and (1 x 16384). The GPU is not named
// there; FlashAttention-2 reaches 358 TFLOP/s at 16K in it, past an A100's 312 peak and within
// 3% of the paper's H100 bar.
constexpr double kPrFa2At512 = 0.236768, kPrFa2At16k = 6.14246;
constexpr double kPrSdpaAt512 = 0.24512, kPrSdpaAt16k = 6.55098;
constexpr double kPrFlexAt512 = 0.257984, kPrFlexAt16k = 5.38931;

// A row measured beside FlashAttention-2 in that run: its forward at FA2's paper bars times
// its speed relative to FA2 there (the inverse latency ratio); the causal forward at FA2's
// causal share of the non-causal bar; the backward FA2's.
constexpr AttentionRow beside_fa2(AttentionKernel kernel, std::string_view name, double at_512,
                                  double at_16k, std::string_view source,
                                  std::string_view borrowed, std::string_view default_of) {
  const double fwd_16k = kFa2Fwd16k * kPrFa2At16k / at_16k;
  return AttentionRow{kernel,
                      name,
                      kFa2Fwd512 * kPrFa2At512 / at_512,
                      fwd_16k,
                      kFa2Bwd512,
                      kFa2Bwd16k,
                      kFa2CausalFwd16k * fwd_16k / kFa2Fwd16k,
                      source,
                      borrowed,
                      default_of};
}

constexpr std::string_view kFa3Paper =
    "FlashAttention-3 paper (Shah et al., arXiv 2407.08608), Figs. 5 and 6, H100 SXM";
constexpr std::string_view kPr2443 =
    "pytorch/benchmark pull request #2443 (tritonbench flash_attention, d 128, 16 heads), "
    "relative to FlashAttention-2 in the same run";

constexpr std::array<AttentionRow, 5> kRows{{
    {AttentionKernel::Fa2, "fa2", kFa2Fwd512, kFa2Fwd16k, kFa2Bwd512, kFa2Bwd16k,
     kFa2CausalFwd16k, kFa3Paper, "", "flash-attn 2 called directly"},
    {AttentionKernel::Fa3, "fa3", 467, 648, 316, 561, 616, kFa3Paper, "",
     "flash-attn 3 called directly; `auto` where no table answers"},
    {AttentionKernel::Cudnn, "cudnn", 497, 595, 305, 516, 539,
     "cuDNN 9 in the FlashAttention-3 paper (Figs. 5 and 6), H100 SXM", "",
     "Megatron-LM and NeMo through Transformer Engine (cuDNN fused attention is preferred on "
     "Hopper: NVIDIA/NeMo pull request #9188, memory_optimizations.rst)"},
    beside_fa2(AttentionKernel::SdpaFlash, "sdpa_flash", kPrSdpaAt512, kPrSdpaAt16k, kPr2443,
               "backward and causal share: FlashAttention-2's (the flash backend is its kernel)",
               "TorchTitan (F.scaled_dot_product_attention, BF16 on Hopper)"),
    beside_fa2(AttentionKernel::Flex, "flex", kPrFlexAt512, kPrFlexAt16k, kPr2443,
               "backward and causal share: FlashAttention-2's (no published H100 figure)",
               "TorchTitan with use_flex_attn"),
}};
constexpr bool rows_follow_enum() {
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    if (static_cast<std::size_t>(kRows[i].kernel) != i + 1) {
      return false;
    }
  }
  return true;
}
static_assert(rows_follow_enum(), "attention rows in AttentionKernel order from fa2");

}  // namespace

const std::array<AttentionRow, 5>& attention_rows() { return kRows; }

const AttentionRow& attention_row(AttentionKernel kernel) {
  if (kernel == AttentionKernel::Auto) {
    return kRows[1];
  }
  return kRows[static_cast<std::size_t>(kernel) - 1];
}

}  // namespace hopsim::work
