// The `chakra` workload parser.
#include "tools/config/chakra_config.hpp"

#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "tools/chakra/et_file.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::config {
namespace {

constexpr std::int64_t kMaxRank = std::int64_t{1} << 20;

std::vector<int> parse_rank_list(const Node& list, std::int64_t max) {
  list.expect_array();
  std::vector<int> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.push_back(static_cast<int>(list.at(i).integer_in(0, max)));
  }
  return out;
}

// Per op, the algorithm the trace's collectives of that op run with.
void parse_algorithms(const Node& n, work::ChakraJob& job) {
  n.allow_only(Section::ChakraAlgorithms);
  for (const work::CollectiveOp op : work::all_ops()) {
    const std::string_view key = work::op_name(op);
    if (op == work::CollectiveOp::SendRecv || !n.has(key)) {
      continue;
    }
    std::vector<std::string_view> names;
    std::vector<work::CollectiveAlgorithm> algorithms;
    for (const work::CollectiveAlgorithm a : work::all_algorithms()) {
      if (work::implements(op, a)) {
        names.push_back(work::algorithm_name(a));
        algorithms.push_back(a);
      }
    }
    job.algorithms[static_cast<std::size_t>(op)] = algorithms[n.at(key).index_of(names)];
  }
}

}  // namespace

template <>
work::ChakraJob parse_job<work::ChakraJob>(const Node& workload, const JobParseContext& /*ctx*/) {
  workload.allow_only(Section::ChakraWorkload);
  work::ChakraJob job;
  const Node trace = workload.at("trace");
  const std::string named = trace.string();
  const std::filesystem::path p(named);
  job.source = p.is_absolute()
                   ? named
                   : display_path((std::filesystem::path(workload.file()).parent_path() / p)
                                      .lexically_normal());
  try {
    job.trace = std::make_shared<const work::EtTrace>(chakra::read_trace(job.source));
  } catch (const chakra::EtError& e) {
    throw ConfigError(e.what());
  }
  if (workload.has("gpus")) {
    job.gpus = parse_rank_list(workload.at("gpus"), kMaxRank);
  }
  if (workload.has("groups")) {
    const Node groups = workload.at("groups");
    groups.expect_object();
    for (const auto& [name, members] : groups.json().items()) {
      const Node list = groups.at(name);
      job.groups[name] = parse_rank_list(list, kMaxRank);
      if (job.groups[name].empty()) {
        list.fail("a group has at least one rank");
      }
    }
  }
  if (workload.has("compute")) {
    job.compute = static_cast<work::TraceCompute>(
        workload.at("compute").index_of(work::kTraceComputeNames));
  }
  if (workload.has("algorithms")) {
    parse_algorithms(workload.at("algorithms"), job);
  }
  return job;
}

}  // namespace hopsim::config
