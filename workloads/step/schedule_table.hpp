// Pipeline schedules as data: one row per schedule (its name, where it puts the model stages,
// its shape check, each rank's order, the bubble of an ideal pipeline in closed form, and what
// the step may combine it with). The parser, the schema, `schedule: auto`, `explain`, the fold
// and the unfolded step read the table; a new schedule is its own file (schedule_<name>.cpp,
// defining its row) and one line in schedule_table.cpp (docs/architecture.md, "Adding a
// pipeline schedule").
//
// The bubble is never added by formula: the simulation makes it of the order and the
// dependencies (pipeline_layout.hpp). The closed form is what reports print beside it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/step/pipe_op.hpp"

namespace hopsim::work {

/// What a schedule is laid out over: p pipeline ranks, m micro-batches per step, v model
/// chunks per rank (virtual_stages) and, for Meta's interleaved variant, micro-batches per
/// group (0: none set).
struct PipeShape {
  int ranks = 1;
  int micro_batches = 1;
  int chunks = 1;
  int group = 0;
};

/// Per rank, its ops in the order it runs them.
using PipeOrder = std::vector<std::vector<PipeOp>>;

/// One model stage's op times in an ideal pipeline (equal stages, no communication): a
/// forward, a whole backward, that backward's weight part, and an overlapped forward-backward
/// pair (forward + backward where nothing overlaps).
struct StageOpTimes {
  double forward = 1;
  double backward = 2;
  double weight = 1;
  double pair = 3;
};

struct ScheduleRow {
  std::string_view name;  ///< in configs and reports
  std::string_view note;  ///< for the reference: what it is, its source
  /// Model stages of the shape, and those pipeline rank `rank` holds (in the order memory and
  /// optimizer counts list them).
  int (*stages)(const PipeShape& s);
  std::vector<int> (*rank_stages)(const PipeShape& s, int rank);
  /// Problems of the shape (pointers under `at`), beyond at least 1 rank, micro-batch and
  /// chunk (which check_schedule tests first): an order is built only for a shape without any.
  Problems (*check)(const PipeShape& s, const std::string& at);
  PipeOrder (*order)(const PipeShape& s);
  /// Idle time per rank of an ideal pipeline with these per-stage times, in their unit; none
  /// where no closed form is known (Meta's interleaved groups).
  std::optional<double> (*bubble)(const PipeShape& s, const StageOpTimes& t);
  /// The virtual_stages values `schedule: auto` tries on p ranks of a model of `layers` layers
  /// (none: not tried there).
  std::vector<int> (*auto_chunks)(int ranks, std::int64_t layers);
  bool takes_chunks = false;  ///< virtual_stages >= 2 is its own (interleaved)
  bool takes_group = false;   ///< microbatch_group applies
  /// Its orders split backwards into input and weight parts, or run overlapped
  /// forward-backward pairs (a folded step then measures its MoE layer's pair).
  bool splits_backward = false;
  bool pairs = false;
  /// Its pairs walk the two micro-batches' layers in step (Megatron's combined 1F1B: layer l's
  /// forward beside layer L - l's backward), so the backward frees a layer's activations as
  /// the forward saves one: a pair holds its backward's micro-batch and one layer more, not
  /// both micro-batches (activation_steps lists its backward first).
  bool pair_walks_layers = false;
  /// An EP-overlap schedule: the row it runs with the overlap (explain's ep_overlap compares
  /// the two); empty for the others.
  std::string_view overlaps{};
  /// Megatron's activation-memory formula describes it (1F1B and its interleaved schedule).
  bool megatron_formula = false;

  /// Whether its orders hold only forwards and whole backwards: what ZeRO-3's per-layer
  /// gathers and partial folding's real layers are simulated under.
  bool plain_ops() const { return !splits_backward && !pairs; }
};

/// Every schedule, in reference order.
std::span<const ScheduleRow* const> pipe_schedules();
/// The row named `name`, or null.
const ScheduleRow* schedule_named(std::string_view name);
/// 1F1B: a step's schedule unless it names another.
const ScheduleRow& default_schedule();
/// "\"1f1b\", \"interleaved\", ... or \"dualpipev\"" (the reference and error messages).
std::string quoted_schedule_names();

/// Problems of `row` on `s`, as pointers under `at`: at least 1 rank, micro-batch and chunk,
/// then the row's own check.
Problems check_schedule(const ScheduleRow& row, const PipeShape& s, const std::string& at);
/// Each rank's order; `s` must pass check_schedule.
PipeOrder schedule_order(const ScheduleRow& row, const PipeShape& s);

/// The share of a step an ideal pipeline of `row` idles: its closed-form bubble over the
/// bubble and a rank's work, stages x m / p x (forward + backward); none where the row has no
/// closed form.
std::optional<double> ideal_bubble_fraction(const ScheduleRow& row, const PipeShape& s,
                                            const StageOpTimes& t = {});

/// Per rank, in its order, what each op does to its saved activations: (model stage, true)
/// for a forward that saves its stage's, (model stage, false) for a backward's input part
/// that frees them (the weight part keeps nothing worth counting). A pair lists its forward
/// first, or its backward first where `pair_walks_layers`.
std::vector<std::vector<std::pair<int, bool>>> activation_steps(const PipeOrder& order,
                                                                bool pair_walks_layers = false);

/// Runs `order` on its data dependencies alone (below): per rank, how many of its ops ran (all
/// of them when the order finishes).
std::vector<std::size_t> ops_run(const PipeOrder& order, int stages);

/// Runs `order` on its data dependencies alone (a forward after the previous stage's forward
/// of its micro-batch, a backward's input part after the next stage's, the last stage's after
/// its own forward, a weight part after its input part; a pair after both halves' inputs),
/// each rank taking its ops in order: the first rank that does not finish and the op it waits
/// on, or none when every order runs to its end.
std::optional<std::pair<int, PipeOp>> stalled_op(const PipeOrder& order, int stages);

}  // namespace hopsim::work
