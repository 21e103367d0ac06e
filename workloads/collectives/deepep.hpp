// DeepEP's defaults for its normal (high-throughput) kernels, by EP size.
#pragma once

#include <cstdint>

namespace hopsim::work {

/// What DeepEP's normal kernels reach on a cluster, beyond its links.
struct DeepEpModel {
  /// The share of NVLink bandwidth its forwarding and gathering reach (they run on a few SMs:
  /// 24 by default); 1: the links' full achievable rate.
  double nvlink_efficiency = 1.0;
};

/// Tokens per InfiniBand chunk of DeepEP's internode dispatch (or combine), the
/// `num_max_rdma_chunked_send_tokens` of `Buffer.get_dispatch_config` / `get_combine_config`
/// (deepseek-ai/DeepEP, deep_ep/buffer.py at commit 04b06f7): 16 ranks 20 (combine 28), 24 and
/// 32 ranks 32 (20), 64 ranks 28 (20), 128 ranks 32 (12), 144 and 160 ranks 12 (8). Sizes between
/// take the nearest smaller one; up to 8 ranks nothing crosses InfiniBand (returns 0).
inline std::int64_t deepep_chunk_tokens(std::int64_t ranks, bool combine) {
  struct Row {
    std::int64_t ranks;
    std::int64_t dispatch;
    std::int64_t combine;
  };
  constexpr Row kRows[] = {{16, 20, 28},  {24, 32, 20},  {32, 32, 20}, {64, 28, 20},
                           {128, 32, 12}, {144, 12, 8}, {160, 12, 8}};
  std::int64_t tokens = 0;
  for (const Row& r : kRows) {
    if (ranks >= r.ranks) {
      tokens = combine ? r.combine : r.dispatch;
    }
  }
  return tokens;
}

}  // namespace hopsim::work
