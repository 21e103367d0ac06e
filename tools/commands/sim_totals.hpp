// What the engine did over a whole run: the cases and probes it simulated and their events,
// flows and solves, with the solver's setting.
#pragma once

#include <cstddef>
#include <cstdint>

#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// Engine statistics summed over a run's cases and probes (the report's "sim").
struct SimTotals {
  std::size_t cases = 0;
  std::size_t probes = 0;
  std::uint64_t events = 0;
  std::uint64_t flows = 0;
  std::uint64_t solves = 0;
  std::uint64_t flows_snapped = 0;  ///< flows the approximate solver finished early or late
  double tolerance = 0;             ///< the approximate solver's; 0: exact
  double wall_s = 0;                ///< the only figure that differs between runs

  bool approximate() const { return tolerance > 0; }
};

/// The totals of `result`, simulated with `experiment`'s solver setting.
SimTotals sim_totals(const work::Experiment& experiment, const work::RunResult& result);

}  // namespace hopsim::tools
