// Megatron's interleaved 1F1B: p ranks of v chunks each, rank r holding model stages r, r + p,
// ..., r + (v - 1) p; micro-batches go through the chunks in groups of N (Megatron's N = p;
// any other is Meta's variant for Llama 3, whose last group is what is left).
#include <algorithm>

#include <fmt/format.h>

#include "workloads/step/schedule_parts.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::work {
namespace {

// The micro-batch group an order uses: the shape's, 0 meaning p, at most m.
int group_size(const PipeShape& s) {
  return std::min(s.micro_batches, s.group == 0 ? s.ranks : s.group);
}

// Every forward (or backward) of rank r, in order: micro-batches in groups of n (the last
// group what is left), each group through chunk 0, then chunk 1, ...; backward takes the
// chunks in reverse.
std::vector<PipeOp> chunk_ops(const PipeShape& s, int r, int n, bool forward) {
  std::vector<PipeOp> out;
  const int m = s.micro_batches;
  const int v = s.chunks;
  for (int start = 0; start < m; start += n) {
    const int size = std::min(n, m - start);
    for (int c = 0; c < v; ++c) {
      const int chunk = forward ? c : v - 1 - c;
      for (int i = 0; i < size; ++i) {
        out.push_back(
            {forward ? OpWork::Forward : OpWork::Backward, chunk * s.ranks + r, start + i});
      }
    }
  }
  return out;
}

// Each rank's order with these warm-ups.
PipeOrder with_warmups(const PipeShape& s, const std::vector<int>& warmup) {
  const int n = group_size(s);
  PipeOrder out;
  for (int r = 0; r < s.ranks; ++r) {
    out.push_back(schedule_parts::one_forward_one_backward(
        chunk_ops(s, r, n, true), chunk_ops(s, r, n, false), warmup[static_cast<std::size_t>(r)]));
  }
  return out;
}

// Warm-up forwards before the first backward: Megatron's 2 (p - r - 1) + (v - 1) N with N the
// group, and at most (v + 1) N: with N < p the first rank's forward k of a later chunk needs
// the last rank's forward k - N, and the last rank (warm-up (v - 1) N, then one forward per
// backward) runs its first v N + 1 forwards on backwards of its own last chunk only, so a
// longer warm-up would wait on a backward that waits on it. Megatron's N = p never reaches the
// cap. A last group smaller than N shifts the indices the cap counts on: while the order
// stalls, the longest warm-up (the first rank's) takes one forward fewer and no rank keeps a
// longer one, down to the (v - 1) N forwards a first backward needs.
PipeOrder build(const PipeShape& s) {
  const int p = s.ranks;
  const int v = s.chunks;
  const int n = group_size(s);
  std::vector<int> warmup;
  for (int r = 0; r < p; ++r) {
    warmup.push_back(
        std::min(s.micro_batches * v, std::min(2 * (p - r - 1) + (v - 1) * n, (v + 1) * n)));
  }
  PipeOrder order = with_warmups(s, warmup);
  if (n >= p && s.micro_batches % n == 0) {
    return order;  // Megatron's orders (whole groups of p or more) run to the end
  }
  while (warmup[0] > (v - 1) * n) {
    const std::vector<std::size_t> ran = ops_run(order, p * v);
    bool finished = true;
    for (std::size_t r = 0; r < order.size(); ++r) {
      finished = finished && ran[r] == order[r].size();
    }
    if (finished) {
      break;
    }
    --warmup[0];
    for (int& w : warmup) {
      w = std::min(w, warmup[0]);
    }
    order = with_warmups(s, warmup);
  }
  return order;  // it finishes, or check reports where it stalls
}

Problems check_interleaved(const PipeShape& s, const std::string& at) {
  if (s.chunks < 2) {
    return {{at, "interleaved needs at least 2 chunks (virtual stages) per rank"}};
  }
  if (s.group == 0 && s.micro_batches % s.ranks != 0) {
    return {{at, fmt::format("interleaved runs micro-batches in groups of the {} stages: {} "
                             "micro-batches are not a multiple (set microbatch_group for "
                             "Meta's variant, whose last group may be smaller)",
                             s.ranks, s.micro_batches)}};
  }
  // Megatron's own order (groups of p, m a multiple of p) always finishes; a group of the
  // user's is run dry first (O(p^2 m v) at worst, so not for every default order).
  if (s.group == 0) {
    return {};
  }
  const auto stalled = stalled_op(build(s), s.ranks * s.chunks);
  if (!stalled) {
    return {};
  }
  const auto& [rank, op] = *stalled;
  return {{at, fmt::format("the interleaved order with micro-batch groups of {} never finishes: "
                           "pipeline rank {} waits forever for the {} of micro-batch {} through "
                           "chunk {}; use a larger microbatch_group",
                           group_size(s), rank, op.work == OpWork::Forward ? "forward" : "backward",
                           op.micro_batch, op.stage / s.ranks)}};
}

// (p - 1)(F + B) with a chunk's times, v times less than 1F1B's over the same model; no closed
// form for Meta's groups.
std::optional<double> bubble_interleaved(const PipeShape& s, const StageOpTimes& t) {
  if (s.group != 0) {
    return std::nullopt;
  }
  return (s.ranks - 1) * (t.forward + t.backward);
}

// 2 to 8 chunks per rank while p x chunks does not exceed the layers.
std::vector<int> auto_chunks(int ranks, std::int64_t layers) {
  constexpr int kMostChunks = 8;
  std::vector<int> out;
  for (int v = 2; ranks >= 2 && v <= kMostChunks && std::int64_t{ranks} * v <= layers; ++v) {
    out.push_back(v);
  }
  return out;
}

std::vector<int> rank_stages(const PipeShape& s, int rank) {
  std::vector<int> out;
  for (int c = 0; c < s.chunks; ++c) {
    out.push_back(c * s.ranks + rank);
  }
  return out;
}

}  // namespace

extern const ScheduleRow kInterleavedSchedule;
const ScheduleRow kInterleavedSchedule{
    .name = "interleaved",
    .note =
        "Megatron's interleaved 1F1B over virtual_stages chunks per rank (micro-batches a "
        "multiple of pp, or in microbatch_group groups: Meta's variant)",
    .stages = [](const PipeShape& s) { return s.ranks * s.chunks; },
    .rank_stages = rank_stages,
    .check = check_interleaved,
    .order = build,
    .bubble = bubble_interleaved,
    .auto_chunks = auto_chunks,
    .takes_chunks = true,
    .takes_group = true,
    .megatron_formula = true,
};

}  // namespace hopsim::work
