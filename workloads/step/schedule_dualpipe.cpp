// DualPipe (DeepSeek-V3, arXiv 2412.19437 section 3.2.1): a bidirectional pipeline. The model
// is cut into p stages; half the micro-batches enter at rank 0 and run stages 0, 1, ..., p - 1
// on ranks 0, 1, ..., p - 1 (direction 0, micro-batches 0 .. m/2 - 1), half enter at rank
// p - 1 and run them on ranks p - 1, ..., 0 (direction 1, m/2 .. m - 1). Every rank holds
// stages r and p - 1 - r, every stage lives on two ranks; forwards of one direction overlap
// backwards of the other in pairs, and some backwards defer their weight part (dual_order.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "workloads/step/dual_order.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::work {
namespace {

Problems check_dualpipe(const PipeShape& s, const std::string& at) {
  if (s.chunks != 1) {
    return {{at, fmt::format("dualpipe holds 2 stages per rank by itself, not {} chunks "
                             "(virtual_stages 1)",
                             s.chunks)}};
  }
  if (s.ranks < 2 || s.ranks % 2 != 0) {
    return {{at, fmt::format("dualpipe runs an even number of pipeline ranks, at least 2; got "
                             "pp {}",
                             s.ranks)}};
  }
  if (s.micro_batches % 2 != 0 || s.micro_batches < 2 * s.ranks) {
    return {{at, fmt::format("dualpipe feeds micro-batches from both ends: an even number, at "
                             "least 2 x pp = {}; got {}",
                             2 * s.ranks, s.micro_batches)}};
  }
  return {};
}

// The stage rank r runs for direction d.
int stage_of(int p, int r, int d) {
  return d == 0 ? r : p - 1 - r;
}

PipeOrder order_dualpipe(const PipeShape& s) {
  const int p = s.ranks;
  const int half = s.micro_batches / 2;
  PipeOrder out;
  for (int r = 0; r < p; ++r) {
    // Chunk 0 is the direction that enters at this rank's end: direction 0 on the first half.
    const int d0 = r < p / 2 ? 0 : 1;
    schedule_parts::DualChunks c;
    c.stage = {stage_of(p, r, d0), stage_of(p, r, 1 - d0)};
    c.first_micro_batch = {d0 * half, (1 - d0) * half};
    out.push_back(schedule_parts::dual_rank_order(p / 2, std::min(r, p - 1 - r), half, c));
  }
  return out;
}

// DeepSeek-V3's Table 2: (p/2 - 1)(F&B + B - 3W); the simulated order idles up to one forward
// less (the paper counts one more on the critical path).
std::optional<double> bubble_dualpipe(const PipeShape& s, const StageOpTimes& t) {
  return (s.ranks / 2 - 1) * (t.pair + t.backward - 3 * t.weight);
}

}  // namespace

extern const ScheduleRow kDualPipeSchedule;
const ScheduleRow kDualPipeSchedule{
    .name = "dualpipe",
    .note =
        "DeepSeek-V3's bidirectional DualPipe (pp even, micro-batches even and at least "
        "2 x pp; two stages per rank, each stage on two ranks)",
    .stages = [](const PipeShape& s) { return s.ranks; },
    .rank_stages =
        [](const PipeShape& s, int rank) {
          return std::vector<int>{rank, s.ranks - 1 - rank};
        },
    .check = check_dualpipe,
    .order = order_dualpipe,
    .bubble = bubble_dualpipe,
    .auto_chunks =
        [](int ranks, std::int64_t) {
          return ranks % 2 == 0 ? std::vector<int>{1} : std::vector<int>{};
        },
    .splits_backward = true,
    .pairs = true,
};

}  // namespace hopsim::work
