// What a replayed Chakra trace's report says of its input: where it came from, its ranks, and
// its nodes by type and collectives by op.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "workloads/trace/chakra_job.hpp"

namespace hopsim::tools {

struct ChakraFigures {
  std::string source;
  std::string version;  ///< the files' schema version (GlobalMetadata)
  std::int64_t ranks = 0;
  std::string compute;  ///< "recorded" or "model"
  std::int64_t kernels = 0;     ///< GPU compute nodes
  std::int64_t host_ops = 0;    ///< compute nodes with is_cpu_op
  std::int64_t metadata = 0;
  std::int64_t sends = 0;       ///< send/recv pairs (one send each)
  std::int64_t send_bytes = 0;
  /// Per op ("all_reduce", "barrier", ...): collective nodes over all ranks, and their bytes.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> collectives;
  /// Dependencies on nodes not in their file, dropped, and the first ("FILE: node 216 on node
  /// 3").
  std::int64_t dropped_deps = 0;
  std::string first_dropped;
};

ChakraFigures chakra_figures(const work::ChakraJob& job);

}  // namespace hopsim::tools
