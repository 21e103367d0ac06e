// Pipeline schedules: the order in which each pipeline rank runs the forward and backward
// passes of its model chunks over the micro-batches, and the plan that runs them.
//
// A model of p x v stages is cut into p pipeline ranks holding v chunks each: rank r holds the
// stages r, r + p, ..., r + (v - 1) p (Megatron's interleaving; v = 1 is plain 1F1B). A
// micro-batch's forward runs the stages in order, its backward in reverse; activations (and
// their gradients) cross between ranks as point-to-point flows. The schedule only orders each
// rank's work; the bubble is what the simulation makes of the order and the dependencies, not
// a formula (docs/pipeline.md: the closed forms the tests check it against).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/problem.hpp"
#include "sim/units.hpp"
#include "workloads/compute/source.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

/// 1F1B (PipeDream-Flush: warm-up forwards, one forward one backward, cool-down backwards);
/// interleaved (Megatron's 1F1B over v chunks per rank, micro-batches in groups of p);
/// DualPipe (bidirectional, dualpipe.hpp: its own order and plan).
enum class PipeSchedule : std::uint8_t { OneFOneB, Interleaved, DualPipe };

/// "1f1b", "interleaved", "dualpipe".
std::string_view pipe_schedule_name(PipeSchedule s);

/// One unit of a rank's work: a micro-batch's forward or backward through one of its chunks.
struct PipeOp {
  int micro_batch = 0;
  int chunk = 0;  ///< 0 .. v-1 on this rank: model stage chunk x p + rank
  bool forward = true;
  bool operator==(const PipeOp&) const = default;
};

/// Problems of a schedule's shape, as pointers under `at`: p, m, v >= 1; interleaved needs
/// v >= 2 and, with Megatron's groups of p (group 0), m a multiple of p; 1F1B v = 1 and no
/// group; DualPipe v = 1 and check_dualpipe's shape. An interleaved order with a group of the
/// user's is also run dry (dependencies only, no times) so that a group too small for its
/// warm-up is an error, never a plan that waits forever (Megatron's own order finishes).
/// The share of a step an ideal pipeline (equal stages, no communication) idles in its
/// bubble: (p - 1) / (v m + p - 1) for p stages of v chunks and m micro-batches (1F1B: v = 1;
/// Megatron's interleaved order). Not DualPipe's, nor that of Meta's micro-batch groups.
double ideal_bubble_fraction(int stages, int chunks, std::int64_t micro_batches);

Problems check_pipeline(PipeSchedule s, int stages, int micro_batches, int chunks,
                        const std::string& at, int group = 0);

/// Per pipeline rank, its ops in the order it runs them (1F1B, interleaved). The shape must
/// pass check_pipeline.
///
/// Interleaved: micro-batches go through the chunks in groups of `group` (0: p, Megatron's
/// order; any other size is Meta's variant for Llama 3, where the group, N in its paper, is
/// tunable and need not divide m: the last group is what is left). Rank r runs
/// min(m v, 2 (p - r - 1) + (v - 1) N) forwards before its first backward, then one forward,
/// one backward: a smaller group holds fewer micro-batches in flight (less activation memory)
/// for a larger bubble.
std::vector<std::vector<PipeOp>> pipeline_order(PipeSchedule s, int stages, int micro_batches,
                                                int chunks, int group = 0);

/// A pipeline to lay into a plan: the GPU of each pipeline rank, each chunk's forward and
/// backward time, the bytes a micro-batch's activations (forward) and gradients (backward)
/// carry between consecutive stages (0: no flow, the next stage waits only for the previous).
struct PipelineSpec {
  PipeSchedule schedule = PipeSchedule::OneFOneB;
  std::vector<topo::GpuId> gpus;  ///< per pipeline rank
  int micro_batches = 1;
  int chunks = 1;
  int group = 0;  ///< interleaved: micro-batches per group (0: the p stages, Megatron's)
  Time forward{};   ///< one chunk, one micro-batch
  Time backward{};  ///< one chunk, one micro-batch
  /// Per model stage (p x v of them, stage chunk x p + rank): its own forward and backward
  /// time (the first and last stages carry the embedding and the head); empty: `forward` and
  /// `backward` for every stage.
  std::vector<Time> stage_forward;
  std::vector<Time> stage_backward;
  /// Per model stage: a backward runs as this many equal pieces one after the other (its
  /// layers), so that work on part of its result (a gradient bucket) can start before the
  /// whole backward ends; empty: one piece.
  std::vector<int> backward_pieces;
  Bytes activation_bytes{};
  Source source = Source::Roofline;  ///< where the chunk times came from
  /// Where set, it may build an op itself (rank, op, model stage): per piece, its first and
  /// last task in the plan; an empty answer leaves the op to the compute tasks of its stage's
  /// times (partial folding runs a link-perturbed rank's layers as real traffic this way).
  std::function<std::vector<std::pair<PlanTaskId, PlanTaskId>>(Plan&, int, const PipeOp&, int)>
      build_op;
};

/// One backward op of a rank: its chunk and its pieces, in order.
struct BackwardTasks {
  int chunk = 0;
  std::vector<PlanTaskId> pieces;
};

/// Per pipeline rank, the compute task of each op (in pipeline_order's order; a backward in
/// pieces, its last piece), per rank and chunk the pieces of the rank's last backward
/// through that chunk (when its gradients are complete, piece by piece), and per rank every
/// backward in its order (ZeRO-3 reduces each one's gradients).
struct PipelineTasks {
  std::vector<std::vector<PlanTaskId>> ops;
  std::vector<std::vector<std::vector<PlanTaskId>>> last_backward;
  std::vector<std::vector<BackwardTasks>> backwards;
};

/// Adds the pipeline's compute tasks (phases "pipeline" fwd and bwd) and point-to-point flows
/// (phase "pp_comm") to `plan`: each rank's ops in its schedule's order on its compute stream,
/// a forward after the previous stage's forward of the micro-batch has arrived, a backward
/// after the next stage's backward (the last stage's, after its own forward).
PipelineTasks add_pipeline(Plan& plan, const PipelineSpec& spec);

}  // namespace hopsim::work
