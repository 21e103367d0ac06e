// The run report (DESIGN.md §7) as JSON, and the human summary printed on stdout.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/config/experiment.hpp"
#include "topology/cluster.hpp"
#include "workloads/plan/plan.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/summary.hpp"

namespace hopsim::tools {

/// One row of an nccl-tests-like table.
struct CollectiveRow {
  Bytes bytes;
  Time time;
  double algbw_GBps = 0;  // NOLINT(readability-identifier-naming): unit in the name
  double busbw_GBps = 0;  // NOLINT(readability-identifier-naming)
  Bytes ib_bytes;
  Bytes nvlink_bytes;
  Bytes ib_bytes_flat;  ///< all-to-all: what flat would put on InfiniBand
};

struct ReportInput {
  const config::Experiment& experiment;
  const topo::Cluster& cluster;
  const work::Plan& plan;
  const work::Outcome& outcome;
  const work::Summary& summary;
  bool wall_time = true;  ///< include sim.wall_s (the only field that differs between runs)
  const std::vector<CollectiveRow>* rows = nullptr;  ///< kind collective: one per size
};

/// The common keys, plus the kind-specific sections (`flows` and `links` for kind flows).
nlohmann::ordered_json make_report(const ReportInput& in);

/// A readable summary of the report for a terminal.
std::string format_summary(const nlohmann::ordered_json& report);

}  // namespace hopsim::tools
