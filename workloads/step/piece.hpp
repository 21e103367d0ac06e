// A subgraph built once and copied wherever it runs: the unfolded step's layers and heads, and
// the layers and DP collectives of a pipeline rank that partial folding runs as real traffic.
#pragma once

#include <span>
#include <vector>

#include "workloads/plan/plan.hpp"

namespace hopsim::work::step_parts {

/// A plan, with its tasks that wait for nothing inside it (sources) and that nothing inside it
/// waits for (sinks).
struct Piece {
  Plan plan;
  std::vector<PlanTaskId> sources;
  std::vector<PlanTaskId> sinks;
};

Piece make_piece(Plan plan);

/// Copies `piece` into `plan`, GPU g of it becoming gpus[g], its sources after `after`; returns
/// a zero-time task (on gpus.front(), in `join_phase`) after its sinks.
PlanTaskId add_piece(Plan& plan, const Piece& piece, std::span<const topo::GpuId> gpus,
                     PlanTaskId after, std::uint32_t join_phase);

}  // namespace hopsim::work::step_parts
