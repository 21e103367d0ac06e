// DualPipeV (DeepSeek's DualPipe repository, after Sea AI Lab's "cut-in-half"): DualPipe cut
// in half into a V. A model of 2p stages runs on p ranks, rank r holding stages r and
// 2p - 1 - r: every micro-batch enters at rank 0, goes down the ranks through stages 0 .. p - 1
// and back up through p .. 2p - 1, so the last stage is on rank 0 again. Each rank runs
// DualPipe's eight steps (dual_order.hpp) as if it were one half of a DualPipe of 2p ranks:
// its chunk 0 is its stage on the way down, chunk 1 the one on the way up.
#include <fmt/format.h>

#include "workloads/step/dual_order.hpp"
#include "workloads/step/schedule_parts.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::work {
namespace {

Problems check_dualpipev(const PipeShape& s, const std::string& at) {
  if (s.chunks != 1) {
    return {{at, fmt::format("dualpipev holds 2 stages per rank by itself, not {} chunks "
                             "(virtual_stages 1)",
                             s.chunks)}};
  }
  if (s.ranks < 2) {
    return {{at, "dualpipev runs at least 2 pipeline ranks"}};
  }
  if (s.micro_batches < 2 * s.ranks) {
    return {{at, fmt::format("dualpipev needs at least 2 x pp = {} micro-batches; got {}",
                             2 * s.ranks, s.micro_batches)}};
  }
  return {};
}

PipeOrder order_dualpipev(const PipeShape& s) {
  const int p = s.ranks;
  PipeOrder out;
  for (int r = 0; r < p; ++r) {
    schedule_parts::DualChunks c;
    c.stage = {r, 2 * p - 1 - r};
    c.first_micro_batch = {0, 0};
    out.push_back(schedule_parts::dual_rank_order(p, r, s.micro_batches, c));
  }
  return out;
}

// DualPipe's (PP/2 - 1)(F&B + B - 3W) over its 2p stages: (p - 1)(F&B + B - 3W).
std::optional<double> bubble_dualpipev(const PipeShape& s, const StageOpTimes& t) {
  return (s.ranks - 1) * (t.pair + t.backward - 3 * t.weight);
}

}  // namespace

extern const ScheduleRow kDualPipeVSchedule;
const ScheduleRow kDualPipeVSchedule{
    .name = "dualpipev",
    .note =
        "DualPipeV, DualPipe cut in half into a V (2 x pp stages, rank r holding stages r "
        "and 2 pp - 1 - r; micro-batches at least 2 x pp)",
    .stages = [](const PipeShape& s) { return 2 * s.ranks; },
    .rank_stages =
        [](const PipeShape& s, int rank) {
          return std::vector<int>{rank, 2 * s.ranks - 1 - rank};
        },
    .check = check_dualpipev,
    .order = order_dualpipev,
    .bubble = bubble_dualpipev,
    .auto_chunks = schedule_parts::one_chunk_from_two_ranks,
    .splits_backward = true,
    .pairs = true,
};

}  // namespace hopsim::work
