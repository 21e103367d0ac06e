// Probes: sub-plans a job has simulated before it builds its cases (a folded training step
// measures one layer of each kind and its gradient syncs, then assembles the step from their
// times). run() simulates them as it simulates cases, with the same solver settings, and keeps
// them in the result, so they count in the report's `sim` and show in the trace.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/plan/plan.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/summary.hpp"

namespace hopsim::work {

/// A sub-plan a job asks to have measured; names are unique within a job.
struct Probe {
  std::string name;
  Plan plan;
};

/// A probe as simulated.
struct ProbeResult {
  std::string name;
  Plan plan;
  Outcome outcome;
  Summary summary;
};

/// The measured probes by name. A job looks up only probes it declared: a name it did not
/// declare is a bug (assert), never a silent zero.
class Measured {
 public:
  Measured() = default;
  /// Views `results`, which must outlive this.
  explicit Measured(std::span<const ProbeResult> results);
  const ProbeResult& at(std::string_view name) const;
  /// Null when no probe has that name (for probes a job declares only when they move data).
  const ProbeResult* find(std::string_view name) const;
  std::size_t size() const { return by_name_.size(); }

 private:
  std::map<std::string, const ProbeResult*, std::less<>> by_name_;
};

/// Simulates and summarizes `probes` on up to `threads` threads (0: one per core), each
/// with its own engine and network; results in the probes' order, identical for any thread
/// count.
std::vector<ProbeResult> run_probes(const topo::Cluster& cluster, std::vector<Probe> probes,
                                    double tolerance, unsigned threads);

}  // namespace hopsim::work
