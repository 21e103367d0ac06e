// Megatron's EP overlap (--overlap-moe-expert-parallel-comm with --delay-wgrad-compute): its
// interleaved schedule, or 1F1B without a pipeline (pp 1), with each steady-state backward run as
// one op with the forward that follows it (Megatron's combined 1F1B), so that one micro-batch's
// expert all-to-alls hide under the other's compute. Plain 1F1B only at pp 1: with pp > 1 a
// pair's forward output leaves only when the pair ends, and the next rank's pair waits for it, so
// neighbouring ranks' pairs run one after the other (Megatron too asks for virtual stages with
// pp > 1). A folded step times
// such a pair as the MoE layer's simulated forward-backward pair (the same pair DualPipe runs), a
// dense layer's as forward + backward. The forward that follows its backward's in the base order
// joins it. Megatron's pair walks the two micro-batches' layers in step (layer l's forward beside
// layer L - l's backward), so the backward frees a layer as the forward saves one: a pair holds
// one layer's activations more than its backward's micro-batch, not two micro-batches.
#include <fmt/format.h>

#include "workloads/step/schedule_parts.hpp"
#include "workloads/step/schedule_table.hpp"

namespace hopsim::work {

extern const ScheduleRow kInterleavedSchedule;
extern const ScheduleRow kOneFOneBSchedule;

namespace {

// `order` with every whole backward that a forward follows run as one pair with it.
PipeOrder paired(PipeOrder order) {
  for (std::vector<PipeOp>& ops : order) {
    std::vector<PipeOp> out;
    out.reserve(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].work == OpWork::Backward && i + 1 < ops.size() &&
          ops[i + 1].work == OpWork::Forward) {
        out.push_back({OpWork::Pair, ops[i + 1].stage, ops[i + 1].micro_batch, ops[i].stage,
                       ops[i].micro_batch});
        ++i;
      } else {
        out.push_back(ops[i]);
      }
    }
    ops = std::move(out);
  }
  return order;
}

// 1F1B's check, and one pipeline rank: Megatron's EP overlap with pp > 1 asks for virtual stages.
Problems check_1f1b_overlap(const PipeShape& s, const std::string& at) {
  Problems problems = kOneFOneBSchedule.check(s, at);
  if (problems.empty() && s.ranks != 1) {
    problems.push_back(
        {at, fmt::format("1f1b_ep_overlap runs without a pipeline (pp 1), not pp {}: with pp > 1 "
                         "Megatron's EP overlap asks for virtual stages (interleaved_ep_overlap)",
                         s.ranks)});
  }
  return problems;
}

}  // namespace

extern const ScheduleRow kOneFOneBOverlapSchedule;
const ScheduleRow kOneFOneBOverlapSchedule{
    .name = "1f1b_ep_overlap",
    .note =
        "1F1B without a pipeline (pp 1) with Megatron's EP overlap (--overlap-moe-expert-"
        "parallel-comm): each backward and the next forward run as one overlapped pair, as "
        "interleaved_ep_overlap does; not tried by auto",
    .stages = [](const PipeShape& s) { return kOneFOneBSchedule.stages(s); },
    .rank_stages = [](const PipeShape& s, int r) { return kOneFOneBSchedule.rank_stages(s, r); },
    .check = check_1f1b_overlap,
    .order = [](const PipeShape& s) { return paired(kOneFOneBSchedule.order(s)); },
    .bubble = [](const PipeShape&, const StageOpTimes&) { return std::optional<double>{}; },
    .auto_chunks = [](int, std::int64_t) { return std::vector<int>{}; },
    .pairs = true,
    .pair_walks_layers = true,
    .overlaps = "1f1b",
};

extern const ScheduleRow kInterleavedOverlapSchedule;
const ScheduleRow kInterleavedOverlapSchedule{
    .name = "interleaved_ep_overlap",
    .note =
        "interleaved with Megatron's EP overlap (--overlap-moe-expert-parallel-comm "
        "--delay-wgrad-compute): each steady-state backward and the next forward run as one "
        "overlapped pair (the MoE layer's simulated pair with cp 1, with tp > 1 its attention's TP "
        "collectives in each micro-batch's own chain; else forward + "
        "backward), one layer's activations more in flight; not tried by auto",
    .stages = [](const PipeShape& s) { return kInterleavedSchedule.stages(s); },
    .rank_stages = [](const PipeShape& s, int r) { return kInterleavedSchedule.rank_stages(s, r); },
    .check = [](const PipeShape& s,
                const std::string& at) { return kInterleavedSchedule.check(s, at); },
    .order = [](const PipeShape& s) { return paired(kInterleavedSchedule.order(s)); },
    .bubble = [](const PipeShape&, const StageOpTimes&) { return std::optional<double>{}; },
    .auto_chunks = [](int, std::int64_t) { return std::vector<int>{}; },
    .takes_chunks = true,
    .takes_group = true,
    .pairs = true,
    .pair_walks_layers = true,
    .overlaps = "interleaved",
};

}  // namespace hopsim::work
