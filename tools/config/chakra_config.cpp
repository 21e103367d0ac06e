// The `chakra` workload parser.
#include "tools/config/chakra_config.hpp"

#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "tools/chakra/et_file.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/keys/chakra_keys.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::config {
namespace {

namespace ck = keys::chakra;

std::vector<int> parse_rank_list(const Node& list) {
  list.expect_array();
  std::vector<int> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    out.push_back(static_cast<int>(list.at(i).read_item(ck::kGpus)));
  }
  return out;
}

// The algorithm named `name` (one that the key's choices, the table's, hold).
work::CollectiveAlgorithm algorithm_named(std::string_view name) {
  for (const work::AlgorithmRow& row : work::kCollectiveAlgorithms) {
    if (row.name == name) {
      return row.algorithm;
    }
  }
  HOPSIM_ASSERT(false, "no collective algorithm is named \"{}\"", name);
  return work::CollectiveAlgorithm::Ring;
}

// Per op (each key is an op's name), the algorithm the trace's collectives of that op run with.
void parse_algorithms(const Node& n, work::ChakraJob& job) {
  namespace ak = keys::chakra_algorithms;
  n.allow_only(ak::kSection);
  for (const ChoiceKey* key : {&ak::kAllGather, &ak::kReduceScatter, &ak::kAllReduce,
                               &ak::kAllToAll}) {  // in the op table's order
    if (const auto k = n.read_if(*key)) {
      for (const work::OpRow& op : work::kCollectiveOps) {
        if (op.name == key->name) {
          job.algorithms[static_cast<std::size_t>(op.op)] = algorithm_named(key->choices[*k]);
        }
      }
    }
  }
}

}  // namespace

template <>
work::ChakraJob parse_job<work::ChakraJob>(const Node& workload, const JobParseContext& /*ctx*/) {
  workload.allow_only(ck::kSection);
  work::ChakraJob job;
  const std::string named = workload.read(ck::kTrace);
  const std::filesystem::path p(named);
  job.source = p.is_absolute()
                   ? named
                   : display_path((std::filesystem::path(workload.file()).parent_path() / p)
                                      .lexically_normal());
  try {
    for (const std::string& file : chakra::trace_files(job.source)) {
      note_input(file);
    }
    job.trace = std::make_shared<const work::EtTrace>(chakra::read_trace(job.source));
  } catch (const chakra::EtError& e) {
    throw ConfigError(e.what());
  }
  if (workload.has(ck::kGpus)) {
    job.gpus = parse_rank_list(workload.at(ck::kGpus));
  }
  if (workload.has(ck::kGroups)) {
    const Node groups = workload.at(ck::kGroups);
    groups.expect_object();
    for (const auto& [name, members] : groups.json().items()) {
      const Node list = groups.at(name);
      job.groups[name] = parse_rank_list(list);  // trace ranks, bounded as gpus' entries
      if (job.groups[name].empty()) {
        list.fail("a group has at least one rank");
      }
    }
  }
  job.compute = workload.read_as<work::TraceCompute>(ck::kCompute);
  if (workload.has(ck::kAlgorithms)) {
    parse_algorithms(workload.at(ck::kAlgorithms), job);
  }
  return job;
}

}  // namespace hopsim::config
