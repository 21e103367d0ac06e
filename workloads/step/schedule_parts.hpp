// What the schedules' own files share (internal to workloads/step/schedule_*.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/step/pipe_op.hpp"

namespace hopsim::work::schedule_parts {

/// A rank's ops in 1F1B's pattern: `warmup` forwards, then one forward and one backward while
/// forwards are left, then the remaining backwards.
std::vector<PipeOp> one_forward_one_backward(const std::vector<PipeOp>& forwards,
                                             const std::vector<PipeOp>& backwards, int warmup);

/// What `schedule: auto` tries of a schedule of one chunk per rank that needs a pipeline: one
/// chunk on two ranks or more, nothing on one.
std::vector<int> one_chunk_from_two_ranks(int ranks, std::int64_t layers);

/// Rank `rank` of p holding stage `rank` alone: p stages.
int one_stage_per_rank(int ranks);
std::vector<int> own_stage(int rank);

}  // namespace hopsim::work::schedule_parts
