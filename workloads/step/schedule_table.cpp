// The schedule table and what every schedule shares: the shape's first check, the ideal
// bubble's share, the activations an order keeps and the dry run of an order.
#include "workloads/step/schedule_table.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "sim/int_math.hpp"

namespace hopsim::work {

// Each schedule's row, defined in its own file (schedule_<name>.cpp).
extern const ScheduleRow kOneFOneBSchedule;
extern const ScheduleRow kInterleavedSchedule;
extern const ScheduleRow kZbH1Schedule;
extern const ScheduleRow kDualPipeSchedule;
extern const ScheduleRow kDualPipeVSchedule;
extern const ScheduleRow kInterleavedOverlapSchedule;
extern const ScheduleRow kOneFOneBOverlapSchedule;

namespace {

const std::array<const ScheduleRow*, 7> kSchedules{
    &kOneFOneBSchedule,  &kInterleavedSchedule,        &kZbH1Schedule,
    &kDualPipeSchedule,  &kDualPipeVSchedule,          &kInterleavedOverlapSchedule,
    &kOneFOneBOverlapSchedule};

// Whether (stage, micro-batch) is marked in `done` (stages x m flags).
struct Marks {
  int m = 0;
  std::vector<char> flags;

  char& at(int stage, int mb) {
    return flags[static_cast<std::size_t>(stage) * static_cast<std::size_t>(m) +
                 static_cast<std::size_t>(mb)];
  }
};

// Micro-batches an order runs: one more than the largest it names.
int micro_batches_of(const PipeOrder& order) {
  int m = 0;
  for (const auto& ops : order) {
    for (const PipeOp& op : ops) {
      m = std::max({m, op.micro_batch + 1, op.pair_micro_batch + 1});
    }
  }
  return m;
}

}  // namespace

std::span<const ScheduleRow* const> pipe_schedules() {
  return kSchedules;
}

const ScheduleRow* schedule_named(std::string_view name) {
  const auto it = std::ranges::find(kSchedules, name, &ScheduleRow::name);
  return it == kSchedules.end() ? nullptr : *it;
}

const ScheduleRow& default_schedule() {
  return kOneFOneBSchedule;
}

std::string quoted_schedule_names() {
  std::string out;
  for (std::size_t i = 0; i < kSchedules.size(); ++i) {
    out += fmt::format("{}\"{}\"",
                       i == 0                       ? ""
                       : i + 1 == kSchedules.size() ? " or "
                                                    : ", ",
                       kSchedules[i]->name);
  }
  return out;
}

Problems check_schedule(const ScheduleRow& row, const PipeShape& s, const std::string& at) {
  if (s.ranks < 1 || s.micro_batches < 1 || s.chunks < 1) {
    return {{at, fmt::format("a pipeline needs at least 1 stage, micro-batch and chunk; got {}, "
                             "{}, {}",
                             s.ranks, s.micro_batches, s.chunks)}};
  }
  if (s.group < 0) {
    return {{at, fmt::format("a micro-batch group is at least 1, not {}", s.group)}};
  }
  Problems out;
  if (!row.takes_group && s.group != 0) {
    out.push_back({at, fmt::format("{} has no micro-batch groups (microbatch_group is for "
                                   "interleaved)",
                                   row.name)});
  }
  for (Problem& p : row.check(s, at)) {
    out.push_back(std::move(p));
  }
  return out;
}

PipeOrder schedule_order(const ScheduleRow& row, const PipeShape& s) {
  HOPSIM_ASSERT(check_schedule(row, s, "").empty(), "{} on {} x {} x {} group {}", row.name,
                s.ranks, s.micro_batches, s.chunks, s.group);
  return row.order(s);
}

std::optional<double> ideal_bubble_fraction(const ScheduleRow& row, const PipeShape& s,
                                            const StageOpTimes& t) {
  const std::optional<double> bubble = row.bubble(s, t);
  if (!bubble) {
    return std::nullopt;
  }
  // Every stage runs each micro-batch's forward and backward once, wherever it sits.
  const double work = d(row.stages(s)) * d(s.micro_batches) / d(s.ranks) * (t.forward + t.backward);
  return *bubble / (*bubble + work);
}

std::vector<std::vector<std::pair<int, bool>>> activation_steps(const PipeOrder& order,
                                                                bool pair_walks_layers) {
  std::vector<std::vector<std::pair<int, bool>>> steps(order.size());
  for (std::size_t r = 0; r < order.size(); ++r) {
    for (const PipeOp& op : order[r]) {
      const auto f = forward_of(op);
      const auto b = input_gradient_of(op);
      const bool backward_first = pair_walks_layers && op.work == OpWork::Pair;
      if (b && backward_first) {
        steps[r].emplace_back(b->stage, false);
      }
      if (f) {
        steps[r].emplace_back(f->stage, true);
      }
      if (b && !backward_first) {
        steps[r].emplace_back(b->stage, false);
      }
    }
  }
  return steps;
}

std::vector<std::size_t> ops_run(const PipeOrder& order, int stages) {
  const int m = micro_batches_of(order);
  const std::size_t cells = static_cast<std::size_t>(stages) * static_cast<std::size_t>(m);
  Marks fwd{m, std::vector<char>(cells, 0)};
  Marks bwd{m, std::vector<char>(cells, 0)};
  const auto forward_ready = [&](StageBatch x) {
    return x.stage == 0 || fwd.at(x.stage - 1, x.micro_batch) != 0;
  };
  const auto backward_ready = [&](StageBatch x) {
    return x.stage == stages - 1 ? fwd.at(x.stage, x.micro_batch) != 0
                                 : bwd.at(x.stage + 1, x.micro_batch) != 0;
  };
  std::vector<std::size_t> next(order.size(), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 0; r < order.size(); ++r) {
      for (std::size_t& k = next[r]; k < order[r].size(); ++k) {
        const PipeOp& op = order[r][k];
        const auto f = forward_of(op);
        const auto b = input_gradient_of(op);
        const bool ready = (!f || forward_ready(*f)) && (!b || backward_ready(*b)) &&
                           (op.work != OpWork::Weight || bwd.at(op.stage, op.micro_batch) != 0);
        if (!ready) {
          break;
        }
        if (f) {
          fwd.at(f->stage, f->micro_batch) = 1;
        }
        if (b) {
          bwd.at(b->stage, b->micro_batch) = 1;
        }
        progress = true;
      }
    }
  }
  return next;
}

std::optional<std::pair<int, PipeOp>> stalled_op(const PipeOrder& order, int stages) {
  const std::vector<std::size_t> ran = ops_run(order, stages);
  for (std::size_t r = 0; r < order.size(); ++r) {
    if (ran[r] < order[r].size()) {
      return std::pair{static_cast<int>(r), order[r][ran[r]]};
    }
  }
  return std::nullopt;
}

}  // namespace hopsim::work
