// Per size of a collective run: time, bandwidths, bytes, and the flat all-to-all's bytes.
#include "tools/commands/collective_figures.hpp"

namespace hopsim::tools {
namespace {

// One size's row; `env` builds the flat all-to-all it is compared with.
CollectiveRow row(const work::BuildEnv& env, const work::CollectiveJob& job, int ranks,
                  Bytes size, const work::CaseResult& result) {
  CollectiveRow r;
  const Time time = result.outcome.makespan;
  r.bytes = size.n;
  const std::size_t slash = result.choice.find('/');
  r.algorithm = result.choice.substr(0, slash);
  if (slash != std::string::npos) {
    r.protocol = result.choice.substr(slash + 1);
  }
  r.time_s = time.seconds();
  // (A collective that moves nothing takes no time: no bandwidth, not NaN.)
  r.algbw_GBps = time > Time{} ? static_cast<double>(size.n) / time.seconds() / 1e9 : 0.0;
  r.busbw_GBps = r.algbw_GBps * work::busbw_factor(job.op, ranks);
  r.ib_bytes = result.summary.ib_bytes.n;
  r.nvlink_bytes = result.summary.nvlink_bytes.n;
  if (job.op == work::CollectiveOp::AllToAll) {
    r.ib_bytes_flat = work::flat_ib_bytes(env, job, size);
  }
  for (const auto& [name, bytes] : result.metrics) {
    r.rates.emplace_back(name.substr(0, name.find("_bytes")) + "_GBps",
                         bytes / time.seconds() / 1e9);
  }
  return r;
}

// What `rows` predict of `v`: its metric in the last row of its size.
std::optional<double> predicted(const std::vector<CollectiveRow>& rows,
                                const work::Validation& v) {
  std::optional<double> out;
  for (const CollectiveRow& r : rows) {
    if (v.bytes && r.bytes == v.bytes->n) {
      out = r.metric(v.metric);
    }
  }
  return out;
}

}  // namespace

// The row's figure of that name, as the report's row holds it.
std::optional<double> CollectiveRow::metric(std::string_view name) const {
  if (name == "time_s") {
    return time_s;
  }
  if (name == "algbw_GBps") {
    return algbw_GBps;
  }
  if (name == "busbw_GBps") {
    return busbw_GBps;
  }
  std::optional<double> rate;
  for (const auto& [rate_name, value] : rates) {
    if (rate_name == name) {
      rate = value;  // the last of a name, as the report keeps it
    }
  }
  return rate;
}

// The rank sets of the job on the experiment's mesh, then a row per size.
CollectiveFigures collective_figures(const work::Experiment& experiment,
                                     const work::RunResult& result,
                                     const work::CollectiveJob& job) {
  const work::Experiment& e = experiment;
  const work::Mesh mesh(e.parallel);
  const work::JobEnv env = work::job_env(e, mesh);
  const work::BuildEnv build{env, *result.cluster, nullptr};
  const std::vector<std::vector<topo::GpuId>> sets = job.rank_sets(e.cluster, mesh);
  CollectiveFigures f;
  f.ranks = static_cast<int>(sets.front().size());
  f.groups = sets.size();
  for (std::size_t i = 0; i < job.sizes.size(); ++i) {
    f.rows.push_back(row(build, job, f.ranks, job.sizes[i], result.cases[i]));
  }
  if (e.validation) {
    if (const std::optional<double> p = predicted(f.rows, *e.validation)) {
      f.validation = validation_figures(*e.validation, *p);
    }
  }
  return f;
}

}  // namespace hopsim::tools
