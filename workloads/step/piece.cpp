// Subgraphs copied where they run (piece.hpp).
#include "workloads/step/piece.hpp"

#include <utility>

namespace hopsim::work::step_parts {

Piece make_piece(Plan plan) {
  Piece p{std::move(plan), {}, {}};
  const std::size_t n = p.plan.tasks().size();
  std::vector<bool> has_before(n, false);
  std::vector<bool> has_after(n, false);
  for (const auto& [before, task] : p.plan.dependencies()) {
    has_after[before] = true;
    has_before[task] = true;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!has_before[i]) {
      p.sources.push_back(static_cast<PlanTaskId>(i));
    }
    if (!has_after[i]) {
      p.sinks.push_back(static_cast<PlanTaskId>(i));
    }
  }
  return p;
}

PlanTaskId add_piece(Plan& plan, const Piece& piece, std::span<const topo::GpuId> gpus,
                     PlanTaskId after, std::uint32_t join_phase) {
  const PlanTaskId first = plan.append(piece.plan, gpus);
  for (const PlanTaskId s : piece.sources) {
    plan.add_dependency(after, first + s);
  }
  const PlanTaskId join = plan.add_delay(gpus.front(), Time{}, join_phase);
  if (piece.plan.tasks().empty()) {
    plan.add_dependency(after, join);
  }
  for (const PlanTaskId s : piece.sinks) {
    plan.add_dependency(first + s, join);
  }
  return join;
}

}  // namespace hopsim::work::step_parts
