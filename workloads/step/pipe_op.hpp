// The one vocabulary of pipeline schedules: what a pipeline rank runs, op by op.
//
// A model is cut into model stages; a schedule places each stage on one or more pipeline ranks
// and gives every rank its ops in the order it runs them. An op is a micro-batch's forward
// through a stage, its backward (whole, or split into the input gradient on the critical path
// and the weight gradient deferred, as zero-bubble schedules run it), or an overlapped pair of
// one micro-batch's forward and another's backward (DualPipe). Whatever the schedule, an op
// says only this; what it becomes in a plan (a measured task, or a layer group's real layers)
// is the op source's business (pipeline_layout.hpp).
#pragma once

#include <cstdint>
#include <optional>

namespace hopsim::work {

/// Forward; a whole backward (input and weight gradients); the input-gradient part of a
/// backward whose weight part is deferred; that deferred weight part; a forward overlapped with
/// a whole backward of another micro-batch.
enum class OpWork : std::uint8_t { Forward, Backward, BackwardInput, Weight, Pair };

/// One op of a pipeline rank. Micro-batches are numbered 0 .. m-1 over the whole step (a
/// bidirectional schedule numbers one direction's after the other's).
struct PipeOp {
  OpWork work = OpWork::Forward;
  int stage = 0;             ///< model stage (a pair: its forward's)
  int micro_batch = 0;       ///< (a pair: its forward's)
  int pair_stage = 0;        ///< a pair: its backward's model stage
  int pair_micro_batch = 0;  ///< a pair: its backward's micro-batch
  bool operator==(const PipeOp&) const = default;
};

/// A stage and a micro-batch: what an op's data dependencies are about.
struct StageBatch {
  int stage = 0;
  int micro_batch = 0;
  auto operator<=>(const StageBatch&) const = default;
};

/// The forward an op runs (Forward, Pair), if any.
constexpr std::optional<StageBatch> forward_of(const PipeOp& op) {
  if (op.work == OpWork::Forward || op.work == OpWork::Pair) {
    return StageBatch{op.stage, op.micro_batch};
  }
  return std::nullopt;
}

/// The backward whose input gradient an op computes (Backward, BackwardInput, a pair's
/// backward), if any: what the previous stage's backward waits for.
constexpr std::optional<StageBatch> input_gradient_of(const PipeOp& op) {
  switch (op.work) {
    case OpWork::Backward:
    case OpWork::BackwardInput:
      return StageBatch{op.stage, op.micro_batch};
    case OpWork::Pair:
      return StageBatch{op.pair_stage, op.pair_micro_batch};
    case OpWork::Forward:
    case OpWork::Weight:
      break;
  }
  return std::nullopt;
}

/// The stage whose weight gradients an op computes (Backward, Weight, a pair's backward), if
/// any: after the last such op of a stage on a rank, its gradients are complete there.
constexpr std::optional<int> weights_of(const PipeOp& op) {
  switch (op.work) {
    case OpWork::Backward:
    case OpWork::Weight:
      return op.stage;
    case OpWork::Pair:
      return op.pair_stage;
    case OpWork::Forward:
    case OpWork::BackwardInput:
      break;
  }
  return std::nullopt;
}

}  // namespace hopsim::work
