// The `flows` workload parser: ids become indices.
#include "tools/config/flows_config.hpp"

#include <filesystem>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "tools/config/flows_csv.hpp"
#include "tools/config/keys/flows_keys.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::config {
namespace {

namespace fk = keys::flow;

work::ExplicitFlow parse_flow(const Node& n, std::size_t index) {
  n.allow_only(fk::kSection);
  work::ExplicitFlow f;
  f.id = n.read_if(fk::kId).value_or(std::to_string(index));
  f.src = static_cast<int>(n.read(fk::kSrc));
  f.dst = static_cast<int>(n.read(fk::kDst));
  f.bytes = Bytes{n.read(fk::kBytes)};
  f.start = Time::from_seconds(n.read(fk::kStartUs) * 1e-6);
  return f;
}

// "flows_file": the CSV beside the experiment (or an absolute path), read whole.
work::FlowsJob read_flows_file(const Node& workload) {
  if (workload.has(keys::flows::kFlows)) {
    workload.at(keys::flows::kFlowsFile).fail("give \"flows\" or \"flows_file\", not both");
  }
  const std::string named = workload.read(keys::flows::kFlowsFile);
  const std::filesystem::path p(named);
  work::FlowsJob job;
  job.source =
      p.is_absolute()
          ? named
          : display_path(
                (std::filesystem::path(workload.file()).parent_path() / p).lexically_normal());
  job.flows = read_flows_csv(job.source);
  return job;
}

}  // namespace

template <>
work::FlowsJob parse_job<work::FlowsJob>(const Node& workload, const JobParseContext& /*ctx*/) {
  workload.allow_only(keys::flows::kSection);
  if (workload.has(keys::flows::kFlowsFile)) {
    return read_flows_file(workload);
  }
  const Node flows = workload.at(keys::flows::kFlows);
  flows.expect_array();
  work::FlowsJob job;
  std::unordered_map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    job.flows.push_back(parse_flow(flows.at(i), i));
    const auto [it, inserted] = index_of.emplace(job.flows.back().id, i);
    if (!inserted && flows.at(i).has(fk::kId)) {
      flows.at(i).at(fk::kId).fail(fmt::format("duplicate flow id \"{:.40}\" (flow {} has it too)",
                                               job.flows.back().id, it->second));
    }
    if (!inserted) {
      flows.at(i).fail(
          fmt::format("this flow has no \"id\", and its default id, its index "
                      "\"{}\", is flow {}'s id; give it an \"id\"",
                      i, it->second));
    }
  }
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (!flows.at(i).has(fk::kAfter)) {
      continue;
    }
    const Node after = flows.at(i).at(fk::kAfter);
    after.expect_array();
    for (std::size_t k = 0; k < after.size(); ++k) {
      const std::string id = after.at(k).string();
      const auto it = index_of.find(id);
      if (it == index_of.end()) {
        after.at(k).fail(fmt::format("no flow has id \"{:.40}\"", id));
      }
      job.flows[i].after.push_back(it->second);
    }
  }
  return job;
}

}  // namespace hopsim::config
