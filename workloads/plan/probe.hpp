// Probes: sub-plans a job has simulated before it builds its cases (a folded training step
// measures one layer of each kind and its gradient syncs, then assembles the step from their
// times). run() simulates them as it simulates cases, with the same solver settings, and keeps
// them in the result, so they count in the report's `sim` and show in the trace.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workloads/plan/plan.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/summary.hpp"

namespace hopsim::work {

/// A sub-plan a job asks to have measured; names are unique within a job.
struct Probe {
  Probe(std::string n, Plan p, std::shared_ptr<const topo::Cluster> c = nullptr,
        const ComputeSpeeds* s = nullptr)
      : name(std::move(n)), plan(std::move(p)), cluster(std::move(c)), speeds(s) {}

  std::string name;
  Plan plan;
  /// The cluster it runs on when not the run's (a folded step with perturbations measures its
  /// healthy layers on a healthy cluster and the groups a perturbation touches on the real one).
  std::shared_ptr<const topo::Cluster> cluster;
  /// The speeds its GPUs compute at when simulated (the run's, for a group a perturbation
  /// touches measured at its place); null: the compute model's rate, or what its plan carries.
  const ComputeSpeeds* speeds = nullptr;
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
/// with its own engine and network, on `cluster` or the probe's own, at the probe's speeds;
/// results in the probes' order, identical for any thread count.
std::vector<ProbeResult> run_probes(const topo::Cluster& cluster, std::vector<Probe> probes,
                                    double tolerance, unsigned threads);

}  // namespace hopsim::work
