// The `flows` workload parser: ids become indices.
#include "tools/config/flows_config.hpp"

#include <string>
#include <unordered_map>

#include <fmt/format.h>

namespace hopsim::config {
namespace {

constexpr std::int64_t kMaxRank = std::int64_t{1} << 24;

work::ExplicitFlow parse_flow(const Node& n, std::size_t index) {
  n.allow_only(Section::Flow);
  work::ExplicitFlow f;
  f.id = n.has("id") ? n.at("id").string() : std::to_string(index);
  f.src = static_cast<int>(n.at("src").integer_in(0, kMaxRank));
  f.dst = static_cast<int>(n.at("dst").integer_in(0, kMaxRank));
  f.bytes = Bytes{n.at("bytes").integer_in(0, INT64_MAX)};
  if (n.has("start_us")) {
    const double us = n.at("start_us").non_negative();
    f.start = Time::from_seconds(us * 1e-6);
  }
  return f;
}

}  // namespace

template <>
work::FlowsJob parse_job<work::FlowsJob>(const Node& workload, const JobParseContext& /*ctx*/) {
  workload.allow_only(Section::FlowsWorkload);
  const Node flows = workload.at("flows");
  flows.expect_array();
  work::FlowsJob job;
  std::unordered_map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    job.flows.push_back(parse_flow(flows.at(i), i));
    const auto [it, inserted] = index_of.emplace(job.flows.back().id, i);
    if (!inserted && flows.at(i).has("id")) {
      flows.at(i).at("id").fail(fmt::format("duplicate flow id \"{:.40}\" (flow {} has it too)",
                                            job.flows.back().id, it->second));
    }
    if (!inserted) {
      flows.at(i).fail(fmt::format("this flow has no \"id\", and its default id, its index "
                                   "\"{}\", is flow {}'s id; give it an \"id\"",
                                   i, it->second));
    }
  }
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (!flows.at(i).has("after")) {
      continue;
    }
    const Node after = flows.at(i).at("after");
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
