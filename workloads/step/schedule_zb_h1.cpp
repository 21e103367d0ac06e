// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 2.1): 1F1B with each
// backward split into its input gradient B, which the previous stage waits for, and its weight
// gradient W, which nothing waits for. Rank r runs 1F1B's p - r - 1 warm-up forwards, then
// per micro-batch a forward (while any are left) and a B, and a W once it has r of them
// pending; the r deferred Ws end its order. Every rank then holds at most p micro-batches'
// activations, as 1F1B's first rank does, and the backward chain runs on B alone: with at least
// p micro-batches the bubble is (p - 1)(F + B - 2W) with B the whole backward, a third of
// 1F1B's at F = B/2 = W (fewer leave the deferred weight parts too little to fill).
#include <algorithm>

#include <fmt/format.h>

#include "workloads/step/schedule_parts.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::work {
namespace {

Problems check_zb_h1(const PipeShape& s, const std::string& at) {
  if (s.chunks != 1) {
    return {{at, fmt::format("zb-h1 runs 1 chunk per rank, not {} (virtual_stages 1)", s.chunks)}};
  }
  return {};
}

std::vector<PipeOp> rank_order(const PipeShape& s, int r) {
  const int m = s.micro_batches;
  const int warmup = std::min(s.ranks - r - 1, m);
  std::vector<PipeOp> ops;
  for (int k = 0; k < warmup; ++k) {
    ops.push_back({OpWork::Forward, r, k});
  }
  int weights = 0;  // weight parts run so far, in micro-batch order
  for (int k = 0; k < m; ++k) {
    if (k + warmup < m) {
      ops.push_back({OpWork::Forward, r, k + warmup});
    }
    ops.push_back({OpWork::BackwardInput, r, k});
    if (k >= r) {
      ops.push_back({OpWork::Weight, r, weights++});
    }
  }
  for (; weights < m; ++weights) {
    ops.push_back({OpWork::Weight, r, weights});
  }
  return ops;
}

PipeOrder order_zb_h1(const PipeShape& s) {
  PipeOrder out;
  for (int r = 0; r < s.ranks; ++r) {
    out.push_back(rank_order(s, r));
  }
  return out;
}

std::optional<double> bubble_zb_h1(const PipeShape& s, const StageOpTimes& t) {
  return (s.ranks - 1) * (t.forward + t.backward - 2 * t.weight);
}

}  // namespace

extern const ScheduleRow kZbH1Schedule;
const ScheduleRow kZbH1Schedule{
    .name = "zb-h1",
    .note =
        "zero-bubble ZB-H1 (Qi et al., ICLR 2024): 1F1B with each backward split into its "
        "input and weight gradients, weight parts deferred into the bubble; 1F1B's memory",
    .stages = [](const PipeShape& s) { return schedule_parts::one_stage_per_rank(s.ranks); },
    .rank_stages = [](const PipeShape&, int rank) { return schedule_parts::own_stage(rank); },
    .check = check_zb_h1,
    .order = order_zb_h1,
    .bubble = bubble_zb_h1,
    .auto_chunks = schedule_parts::one_chunk_from_two_ranks,
    .splits_backward = true,
};

}  // namespace hopsim::work
