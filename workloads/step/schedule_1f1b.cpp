// 1F1B (PipeDream-Flush, Megatron's default): p - r - 1 warm-up forwards on rank r, then one
// forward and one backward, then the remaining backwards.
#include <algorithm>

#include <fmt/format.h>

#include "workloads/step/schedule_parts.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::work {
namespace {

Problems check_1f1b(const PipeShape& s, const std::string& at) {
  if (s.chunks != 1) {
    return {
        {at, fmt::format("1f1b runs 1 chunk per rank, not {} (interleaved runs more)", s.chunks)}};
  }
  return {};
}

PipeOrder order_1f1b(const PipeShape& s) {
  PipeOrder out;
  for (int r = 0; r < s.ranks; ++r) {
    std::vector<PipeOp> fwd;
    std::vector<PipeOp> bwd;
    for (int k = 0; k < s.micro_batches; ++k) {
      fwd.push_back({OpWork::Forward, r, k});
      bwd.push_back({OpWork::Backward, r, k});
    }
    out.push_back(schedule_parts::one_forward_one_backward(
        fwd, bwd, std::min(s.ranks - r - 1, s.micro_batches)));
  }
  return out;
}

// (p - 1)(F + B): the warm-up's and the cool-down's idle time.
std::optional<double> bubble_1f1b(const PipeShape& s, const StageOpTimes& t) {
  return (s.ranks - 1) * (t.forward + t.backward);
}

}  // namespace

extern const ScheduleRow kOneFOneBSchedule;
const ScheduleRow kOneFOneBSchedule{
    .name = "1f1b",
    .note = "1F1B (PipeDream-Flush, Megatron's default)",
    .stages = [](const PipeShape& s) { return schedule_parts::one_stage_per_rank(s.ranks); },
    .rank_stages = [](const PipeShape&, int rank) { return schedule_parts::own_stage(rank); },
    .check = check_1f1b,
    .order = order_1f1b,
    .bubble = bubble_1f1b,
    .auto_chunks = [](int, std::int64_t) { return std::vector<int>{1}; },
    .megatron_formula = true,
};

namespace schedule_parts {

std::vector<PipeOp> one_forward_one_backward(const std::vector<PipeOp>& forwards,
                                             const std::vector<PipeOp>& backwards, int warmup) {
  const std::size_t total = forwards.size();
  std::vector<PipeOp> ops;
  ops.reserve(2 * total);
  std::size_t f = 0;
  std::size_t b = 0;
  for (; f < static_cast<std::size_t>(warmup); ++f) {
    ops.push_back(forwards[f]);
  }
  for (; f < total; ++f, ++b) {  // steady state: one forward, one backward
    ops.push_back(forwards[f]);
    ops.push_back(backwards[b]);
  }
  for (; b < total; ++b) {
    ops.push_back(backwards[b]);
  }
  return ops;
}

std::vector<int> one_chunk_from_two_ranks(int ranks, std::int64_t /*layers*/) {
  return ranks >= 2 ? std::vector<int>{1} : std::vector<int>{};
}

int one_stage_per_rank(int ranks) {
  return ranks;
}

std::vector<int> own_stage(int rank) {
  return {rank};
}

}  // namespace schedule_parts
}  // namespace hopsim::work
