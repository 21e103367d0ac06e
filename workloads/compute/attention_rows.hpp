// Attention implementations as rows of one table: each row the published H100 SXM figures its
// roofline curve is fitted on (attention_kernel.hpp), where they come from, and which framework
// runs it by default. A row whose backward or causal figure no benchmark publishes says whose
// it borrows; an implementation with no published H100 rate at all has no row.
//
// Bars are TFLOP/s at head dim 128, BF16, 16 heads over 16K tokens (the FlashAttention-3
// paper's setup, arXiv 2407.08608, Figs. 5 and 6), at 512 and 16K tokens per sequence,
// non-causal; causal_fwd_16k is the causal forward at 16K. Rows measured elsewhere are put on
// that paper's footing by their ratio to FlashAttention-2 in the same benchmark run.
#pragma once

#include <array>
#include <string_view>

#include "workloads/compute/attention_kernel.hpp"

namespace hopsim::work {

struct AttentionRow {
  AttentionKernel kernel;
  std::string_view name;  ///< as workload.attention_kernel and calibration tables' `impl`
  double fwd_512, fwd_16k, bwd_512, bwd_16k, causal_fwd_16k;
  std::string_view source;     ///< where the forward bars come from
  std::string_view borrowed;   ///< what is not its own published figure ("" if none)
  std::string_view default_of; ///< the frameworks that run it unless told otherwise
};

/// Every implementation but `auto`, in enum order from fa2.
const std::array<AttentionRow, 5>& attention_rows();
/// The row of `kernel`; auto's is FlashAttention-3's.
const AttentionRow& attention_row(AttentionKernel kernel);

}  // namespace hopsim::work
