// The `flows` workload parser: ids become indices.
#include "tools/config/flows_config.hpp"

#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "tools/config/keys/flows_keys.hpp"

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

}  // namespace

template <>
work::FlowsJob parse_job<work::FlowsJob>(const Node& workload, const JobParseContext& /*ctx*/) {
  workload.allow_only(keys::flows::kSection);
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
