// A profiled step beside the simulated one: the trace's kernels per class (kernel_rules.hpp),
// per GPU and per profiler step, against hopsim's prediction for the experiment meant to
// describe that step (docs/profile-check.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/profile/kernel_rules.hpp"
#include "tools/profile/kineto_trace.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::profile {

struct CheckOptions {
  /// Profiler steps the trace covers; 0: its ProfilerStep#N annotations (1 when it has none).
  std::int64_t steps = 0;
  /// The GPU whose kernels count; unset: every GPU in the trace, averaged.
  std::optional<std::int64_t> device;
};

/// One row: a class, or classes a name cannot tell apart (merged).
struct ClassRow {
  std::vector<std::string> classes;
  double kernels = 0;  ///< in the trace, per GPU and step (a mean: not always whole)
  double trace_s = 0;        ///< the kernels' time, summed, per GPU and step
  /// hopsim's time for the same classes on its busiest GPU (compute classes only).
  std::optional<double> hopsim_s;
};

/// A kernel no rule matched, with its count and time (per GPU and step).
struct Unmatched {
  std::string name;
  double kernels = 0;
  double trace_s = 0;
};

struct ProfileCheck {
  std::int64_t devices = 0;  ///< GPUs whose kernels count
  std::int64_t steps = 1;
  std::int64_t streams = 0;  ///< distinct streams of those GPUs
  /// First kernel's start to last kernel's end, per GPU (averaged) and step.
  double trace_span_s = 0;
  double hopsim_step_s = 0;
  double hopsim_compute_s = 0;  ///< the busiest GPU's compute
  double hopsim_comm_s = 0;     ///< ... and communication (flows in flight)
  std::vector<ClassRow> rows;   ///< compute classes, then nccl, deepep, unmodelled
  ClassRow unclassified;
  std::vector<Unmatched> unmatched;  ///< the unclassified kernels, by time, longest first

  /// The trace's modelled compute (every kernel class's row) and its communication.
  double trace_compute_s() const;
  double trace_comm_s() const;
};

/// The check. hopsim's time per class is the busiest GPU's compute time split by the case's
/// kernel shares (the report's compute_s and compute_kernels). Throws config::ConfigError when
/// --device names a GPU without kernels in the trace.
ProfileCheck check_profile(const KinetoTrace& trace, const KernelRules& rules,
                           const work::CaseResult& result, const CheckOptions& options);

}  // namespace hopsim::profile
