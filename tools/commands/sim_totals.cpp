// A run's engine statistics: probes (a folded step's, a MoE layer's repeated layers) count
// as simulated too.
#include "tools/commands/sim_totals.hpp"

namespace hopsim::tools {

// Sums every case's and probe's outcome.
SimTotals sim_totals(const work::Experiment& experiment, const work::RunResult& result) {
  SimTotals t;
  t.cases = result.cases.size();
  t.probes = result.probes.size();
  const auto add = [&t](const work::Outcome& o) {
    t.events += o.events;
    t.flows += o.flows;
    t.solves += o.solves;
    t.flows_snapped += o.flows_snapped;
  };
  for (const work::CaseResult& c : result.cases) {
    add(c.outcome);
  }
  for (const work::ProbeResult& p : result.probes) {
    add(p.outcome);
  }
  t.tolerance = experiment.solver_tolerance;
  t.wall_s = result.wall_s;
  return t;
}

}  // namespace hopsim::tools
