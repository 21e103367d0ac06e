// What a collective run's report derives per size, nccl-tests style: the time, algorithm and
// bus bandwidth, the bytes over each kind of link, and DeepEP's bottleneck bandwidths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/commands/validation_figures.hpp"
#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// One size of a collective run.
struct CollectiveRow {
  std::int64_t bytes = 0;
  std::string algorithm;                ///< what the job chose for this size
  std::optional<std::string> protocol;  ///< with the algorithm, when it chose one
  double time_s = 0;
  double algbw_GBps = 0;  ///< bytes over time (0 for a collective that takes no time)
  double busbw_GBps = 0;  ///< algbw times the op's bus factor
  std::int64_t ib_bytes = 0;
  std::int64_t nvlink_bytes = 0;
  /// All-to-all: the InfiniBand bytes if each GPU sent straight to each other one (flat).
  std::optional<std::int64_t> ib_bytes_flat;
  /// DeepEP's "bottleneck bandwidths", GB/s: per figure of the case's input named
  /// "<what>_bytes", "<what>_GBps" is its bytes per rank over the time.
  std::vector<std::pair<std::string, double>> rates;

  /// The figure a validation names ("time_s", "algbw_GBps", "busbw_GBps" or a rate).
  std::optional<double> metric(std::string_view name) const;
};

/// The rows of a collective run, one per size, and the groups it ran in.
struct CollectiveFigures {
  int ranks = 0;            ///< per group
  std::size_t groups = 0;   ///< run at once
  std::vector<CollectiveRow> rows;
  /// The experiment's validation: its metric in the last row of its size (none when the
  /// validation names no size, or the row has no such figure).
  std::optional<ValidationFigures> validation;
};

/// The figures of `job`'s run in `result`, simulated as `experiment`.
CollectiveFigures collective_figures(const work::Experiment& experiment,
                                     const work::RunResult& result,
                                     const work::CollectiveJob& job);

}  // namespace hopsim::tools
