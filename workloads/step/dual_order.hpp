// The order DeepSeek's DualPipe builds on each rank (8 steps, rebuilt from its open-source
// schedule), shared by DualPipe and its V-shaped cut DualPipeV (schedule_dualpipe.cpp,
// schedule_dualpipev.cpp). A rank holds two chunks (model stages); chunk 0 is the one its
// micro-batches enter first.
#pragma once

#include <array>
#include <vector>

#include "workloads/step/pipe_op.hpp"

namespace hopsim::work::schedule_parts {

/// A rank's two chunks: each one's model stage and the number of its first micro-batch.
struct DualChunks {
  std::array<int, 2> stage{};
  std::array<int, 2> first_micro_batch{};
};

/// The ops of the rank at place `place` (0-based) of a half of `half` ranks (DualPipe: its
/// distance from the nearer end of p ranks, of p/2; DualPipeV: its rank, of p), each chunk
/// running `per_chunk` micro-batches:
/// 1. nF0: 2 (half - place - 1) forwards of chunk 0;
/// 2. nF0F1: place + 1 forwards of each chunk;
/// 3. nB1W1F1: half - place - 1 times a chunk-1 backward's input part, a weight part, a
///    chunk-1 forward (zero bubble);
/// 4. nF0B1F1B0: per_chunk - 2 half + place + 1 times two overlapped pairs (the middle rank's
///    first not overlapped, to shrink the bubble);
/// 5. nB1F1B0: half - place - 1 times a chunk-1 backward and a pair;
/// 6. nB1B0: place + 1 times a backward of each chunk, the second half as input parts;
/// 7. nWB0: half - place - 1 times a weight part and a chunk-0 input part;
/// 8. nW: the weight parts left.
std::vector<PipeOp> dual_rank_order(int half, int place, int per_chunk, const DualChunks& c);

}  // namespace hopsim::work::schedule_parts
