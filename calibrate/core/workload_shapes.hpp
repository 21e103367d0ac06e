// Shapes the simulator asks the table for: context-parallel attention blocks, tokens per expert.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "calibrate/core/types.hpp"

namespace hopsim::calib {

/// One attention call of a context-parallel rank: s_q queries against s_kv keys.
struct AttnBlock {
  std::int64_t s_q = 0;
  std::int64_t s_kv = 0;
  Mask mask = Mask::None;

  friend bool operator==(const AttnBlock&, const AttnBlock&) = default;
};

/// Zigzag (load-balanced) ring CP: sequence `seq_len` cut into 2·cp chunks of c tokens, rank r
/// holds chunks r and 2cp−1−r. Its calls: one causal (2c × 2c) against its own KV, then
/// `rank` calls full (2c × c) (KV from lower ranks: only their first chunk is visible) and
/// `cp−1−rank` calls full (c × 2c) (KV from higher ranks: only the rank's second chunk sees it).
/// Throws CalibError unless 2·cp divides seq_len and 0 ≤ rank < cp.
std::vector<AttnBlock> zigzag_cp_blocks(std::int64_t seq_len, std::int64_t cp, std::int64_t rank);

/// Contiguous ring CP: rank r holds chunk r of c = seq_len/cp tokens; one causal (c × c) plus
/// `rank` full (c × c) calls; higher ranks' KV is skipped.
std::vector<AttnBlock> contiguous_cp_blocks(std::int64_t seq_len, std::int64_t cp,
                                            std::int64_t rank);

/// Tokens per expert for `experts` experts with mean `mean_tokens`, summing to experts·mean.
/// `imbalance` is "uniform" or "rampR" with 1 ≤ R ≤ 2: a linear ramp from (2−R)·mean to R·mean,
/// so max/mean = R (ramp2 leaves the first expert empty). Rounded by largest remainder.
std::vector<std::int64_t> tokens_per_expert(std::int64_t experts, std::int64_t mean_tokens,
                                            std::string_view imbalance);

}  // namespace hopsim::calib
