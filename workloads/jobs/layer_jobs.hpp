// Parallelism degrees and the CP / EP layer workloads (their specs; the replays come later).
#pragma once

#include <cstdint>

namespace hopsim::work {

struct ParallelSpec {
  std::int64_t tp = 1;
  std::int64_t cp = 1;
  std::int64_t ep = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
};

/// One transformer layer's attention under context parallelism.
struct AttentionLayerJob {
  std::int64_t seq_len = 8192;
  std::int64_t micro_batch = 1;
  bool causal = true;
};

/// One MoE layer under expert parallelism: dispatch, experts, combine.
struct MoeLayerJob {
  std::int64_t tokens_per_gpu = 4096;
  std::int64_t top_k = 8;
  std::int64_t max_nodes_per_token = 4;  ///< 0: no node limit
  double dispatch_bytes_per_element = 1.0;  ///< FP8 (DeepEP adds 1/32 for scales: 1.03125)
  double combine_bytes_per_element = 2.0;   ///< BF16
};

}  // namespace hopsim::work
