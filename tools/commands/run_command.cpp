// `hopsim run` for every workload kind.
#include "tools/commands/run_command.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "tools/config/experiment.hpp"
#include "tools/commands/report.hpp"
#include "tools/commands/trace.hpp"
#include "topology/cluster.hpp"
#include "workloads/jobs/collective_job.hpp"
#include "workloads/plan/runner.hpp"
#include "workloads/plan/summary.hpp"

namespace hopsim::tools {
namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  if (!out || !(out << text)) {
    throw config::ConfigError(fmt::format("{}: cannot write file", path.string()));
  }
}

struct Run {
  work::Plan plan;
  work::Outcome outcome;
  work::Summary summary;
};

Run simulate_plan(const topo::Cluster& cluster, work::Plan plan) {
  Run r{std::move(plan), {}, {}};
  r.outcome = work::simulate(cluster, r.plan);
  r.summary = work::summarize(cluster, r.plan, r.outcome);
  return r;
}

CollectiveRow row_of(const topo::Cluster& cluster, const work::CollectiveJob& job, Bytes size,
                     const Run& run) {
  CollectiveRow row;
  row.bytes = size;
  row.time = run.outcome.makespan;
  row.algbw_GBps = static_cast<double>(size.n) / row.time.seconds() / 1e9;
  row.busbw_GBps =
      row.algbw_GBps * work::busbw_factor(job.op, static_cast<int>(job.ranks.size()));
  row.ib_bytes = run.summary.ib_bytes;
  row.nvlink_bytes = run.summary.nvlink_bytes;
  row.ib_bytes_flat = Bytes{work::flat_ib_bytes(cluster, job, size)};
  return row;
}

}  // namespace

int run_command(const RunOptions& o) {
  const config::Experiment exp = config::load_experiment(o.experiment, o.overrides);
  if (exp.kind != "flows" && exp.kind != "collective") {
    throw config::ConfigError(fmt::format(
        "{}: /workload/kind: workload kind \"{}\" is not simulated yet (this version simulates "
        "\"flows\" and \"collective\"); `hopsim explain` gives its closed-form numbers",
        o.experiment, exp.kind));
  }
  const topo::Cluster cluster(exp.cluster.topology);
  std::vector<CollectiveRow> rows;
  Run last;
  if (exp.kind == "flows") {
    last = simulate_plan(cluster, work::build_flows_plan(exp.flows));
  } else {
    for (Bytes size : exp.collective.sizes) {
      last = simulate_plan(cluster, work::build_collective_plan(cluster, exp.collective, size));
      rows.push_back(row_of(cluster, exp.collective, size, last));
    }
  }
  if (!last.outcome.stuck.empty()) {
    fmt::print(stderr, "{}: {} tasks never ran (a dependency cycle)\n", o.experiment,
               last.outcome.stuck.size());
    return 1;
  }
  const auto report = make_report({exp, cluster, last.plan, last.outcome, last.summary,
                                   !o.no_wall_time, rows.empty() ? nullptr : &rows});
  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir);
    write_file(std::filesystem::path(o.out_dir) / "report.json", report.dump(2) + "\n");
    write_file(std::filesystem::path(o.out_dir) / "config.json", exp.resolved.dump(2) + "\n");
  }
  if (!o.trace_file.empty()) {
    write_file(o.trace_file, make_trace(last.plan, last.outcome).dump() + "\n");
  }
  if (o.json) {
    fmt::print("{}\n", report.dump(2));
  } else {
    fmt::print("{}", format_summary(report));
  }
  return 0;
}

}  // namespace hopsim::tools
