// DualPipe (DeepSeek-V3, arXiv 2412.19437 section 3.2.1): a bidirectional pipeline. The model
// is cut into p stages; micro-batches enter from both ends, half of them at rank 0 running
// stages 0, 1, ..., p - 1 on ranks 0, 1, ..., p - 1 (direction 0), half at rank p - 1
// running them on ranks p - 1, ..., 0 (direction 1). So every rank holds two stages (r and
// p - 1 - r) and every stage lives on two ranks. A forward chunk of one micro-batch runs
// overlapped with a backward chunk of another (a pair), and some backwards are split into the
// input gradient (on the critical path) and the weight gradient (deferred, "zero bubble").
// The order below is that of DeepSeek's open-source schedule (8 steps per rank), rebuilt from
// its description; the bubble comes out of the simulation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/problem.hpp"
#include "sim/units.hpp"
#include "workloads/compute/source.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

/// What one DualPipe op does: a forward; a full backward; a backward's input-gradient part
/// (its weight part deferred); a deferred weight part; a forward of one micro-batch
/// overlapped with a full backward of another.
enum class DualWork : std::uint8_t { Forward, Backward, BackwardInput, Weight, Pair };

struct DualOp {
  DualWork work = DualWork::Forward;
  int direction = 0;    ///< 0: enters at rank 0; 1: enters at rank p - 1
  int micro_batch = 0;  ///< within its direction, 0 .. m/2 - 1
  int pair_direction = 0;    ///< Pair: the backward's
  int pair_micro_batch = 0;  ///< Pair: the backward's
};

/// Problems of DualPipe's shape, as pointers under `at`: p even and >= 2, m (micro-batches,
/// both directions together) even and >= 2p.
Problems check_dualpipe(int stages, int micro_batches, const std::string& at);

/// Per rank, its ops in order. The shape must pass check_dualpipe.
std::vector<std::vector<DualOp>> dualpipe_order(int stages, int micro_batches);

/// The stage that rank `rank` runs for `direction`.
inline int dualpipe_stage(int stages, int rank, int direction) {
  return direction == 0 ? rank : stages - 1 - rank;
}

/// Times per model stage (p of them) and per pair of stages (forward's, backward's).
struct DualStageTimes {
  std::vector<Time> forward;         ///< per stage
  std::vector<Time> backward;        ///< per stage: input and weight gradients
  std::vector<Time> backward_input;  ///< per stage: the input-gradient part
  std::vector<Time> weight;          ///< per stage: the weight-gradient part
  /// p x p, [forward stage * p + backward stage]: a forward overlapped with a backward.
  std::vector<Time> pair;
};

struct DualPipeSpec : DualStageTimes {
  std::vector<topo::GpuId> gpus;  ///< per rank
  int micro_batches = 2;
  Bytes activation_bytes{};
  Source source = Source::Roofline;
  /// Ranks whose own layers run at other times (partial folding: a slow GPU, a perturbed
  /// link): their stages' times on them; every other rank takes the spec's.
  std::map<int, DualStageTimes> rank_times;
};

/// Per rank: its compute tasks in order, and per direction the task after which the rank's
/// gradients of that direction's stage are complete (its last backward or weight part).
struct DualPipeTasks {
  std::vector<std::vector<PlanTaskId>> ops;
  std::vector<std::vector<PlanTaskId>> grads_done;  ///< [rank][direction]
};

/// Adds the pipeline's compute tasks (phase "pipeline": fwd, bwd, weight, pair) and
/// activation flows (phase "pp_comm") to `plan`.
DualPipeTasks add_dualpipe(Plan& plan, const DualPipeSpec& spec);

}  // namespace hopsim::work
