// The lines a what-if prints: what each --set changed, and why one changed nothing.
#include "tools/commands/what_if.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/commands/idle_perturbations.hpp"

namespace hopsim::tools {
namespace {

using config::OverrideChange;

// A value as the line shows it (JSON text, shortened), or what its absence means.
std::string shown(const std::optional<std::string>& v, const char* absent) {
  return v ? config::echo(*v, 60) : std::string(absent);
}

// Whether a later override in the run sets `key`.
bool overridden(const config::ExperimentFile& file, const std::string& key) {
  return std::any_of(file.changes.begin(), file.changes.end(),
                     [&](const OverrideChange& c) { return c.key == key; });
}

// A link's peak set while the links carry the achievable figure that the cluster still gives.
std::optional<std::string> peak_warning(const config::ExperimentFile& file,
                                        const OverrideChange& c) {
  for (const char* link : {"nic", "nvlink"}) {
    const std::string peak = fmt::format("cluster.{}.peak_GBps", link);
    const std::string achievable = fmt::format("cluster.{}.achievable_GBps", link);
    if (c.key != peak || overridden(file, achievable) || !file.resolved.contains("cluster")) {
      continue;
    }
    const auto& cluster = file.resolved.at("cluster");
    if (!cluster.is_object() || !cluster.contains(link) ||
        !cluster.at(link).contains("achievable_GBps")) {
      continue;
    }
    return fmt::format(
        "changes no simulated time: the links carry {} ({} GB/s), which this leaves as it is; a "
        "peak enters only closed forms (explain, the CP overlap threshold). Did you mean --set "
        "{}=...?",
        achievable, cluster.at(link).at("achievable_GBps").dump(), achievable);
  }
  return std::nullopt;
}

// The integer a change's JSON text held before, if any.
std::optional<std::int64_t> integer_before(const OverrideChange& c) {
  const nlohmann::json v = nlohmann::json::parse(c.before.value_or(""), nullptr, false);
  return v.is_number_integer() ? std::optional(v.get<std::int64_t>()) : std::nullopt;
}

// Whether a change of the cluster's size changed what the `used` GPUs run on: before it the
// job did not tile the cluster (the run was refused), or nodes of another size split them.
bool size_change_matters(const work::Experiment& e, const OverrideChange& c, std::int64_t used) {
  const std::optional<std::int64_t> before = integer_before(c);
  if (!before || *before < 1) {
    return true;  // nothing to compare with: say nothing
  }
  const bool nodes = c.key == "cluster.nodes";
  const std::int64_t per_node = nodes ? e.cluster.gpus_per_node : *before;
  if ((nodes ? *before : e.cluster.nodes) * per_node % used != 0) {
    return true;
  }
  return !nodes && used > std::min<std::int64_t>(per_node, e.cluster.gpus_per_node);
}

// A cluster size that the workload's mesh does not use: it runs on tp x cp x pp x dp GPUs.
std::optional<std::string> size_warning(const config::ExperimentFile& file,
                                        const work::RunResult& result, const OverrideChange& c) {
  if (c.key != "cluster.nodes" && c.key != "cluster.gpus_per_node") {
    return std::nullopt;
  }
  const work::Experiment& e = file.experiment;
  const std::int64_t cluster = std::int64_t{e.cluster.nodes} * e.cluster.gpus_per_node;
  if (result.cases.empty() || !result.cases.back().throughput ||
      result.cases.back().throughput->gpus >= cluster ||
      size_change_matters(e, c, result.cases.back().throughput->gpus)) {
    return std::nullopt;
  }
  const work::ParallelSpec& p = e.parallel;
  const std::int64_t used = result.cases.back().throughput->gpus;
  const std::int64_t others = p.tp * p.cp * p.pp;
  return fmt::format(
      "changes nothing in this run: the workload runs on tp x cp x pp x dp = {} x {} x {} x {} "
      "= {} GPUs whatever the cluster's size ({} GPUs now), so this changes only the fabric "
      "around them; to use them, "
      "set parallel.dp{}",
      p.tp, p.cp, p.pp, p.dp, used, cluster,
      cluster % others == 0 ? fmt::format("={}", cluster / others) : std::string());
}

}  // namespace

std::vector<std::string> what_if_lines(const config::ExperimentFile& file,
                                       const work::RunResult& result) {
  std::vector<std::string> lines;
  for (const OverrideChange& c : file.changes) {
    std::optional<std::string> warning;
    if (!c.after && !c.before) {
      warning = fmt::format("changes nothing: {} is not set, so there is nothing to remove",
                            c.key);
    } else if (c.after && c.before == c.after) {
      warning = fmt::format("changes nothing: {} is already {}", c.key, *c.after);
    } else {
      warning = peak_warning(file, c);
      if (!warning) {
        warning = size_warning(file, result, c);
      }
    }
    lines.push_back(fmt::format("{}: {}: {} -> {}", c.text, c.key, shown(c.before, "(unset)"),
                                shown(c.after, "(removed)")));
    if (warning) {
      lines.push_back(fmt::format("warning: {}: {}", c.text, *warning));
    }
  }
  for (const std::string& idle : idle_perturbations(file, &result)) {  // the file's or a --set's
    lines.push_back("warning: " + idle);
  }
  return lines;
}

}  // namespace hopsim::tools
