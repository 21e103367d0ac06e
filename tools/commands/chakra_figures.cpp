// Counting a trace's nodes for its report.
#include "tools/commands/chakra_figures.hpp"

namespace hopsim::tools {

ChakraFigures chakra_figures(const work::ChakraJob& job) {
  ChakraFigures f;
  f.source = job.source;
  f.version = job.trace->version;
  f.ranks = static_cast<std::int64_t>(job.trace->ranks.size());
  f.compute = std::string(work::kTraceComputeNames[static_cast<std::size_t>(job.compute)]);
  for (const work::EtRank& r : job.trace->ranks) {
    if (r.dropped_deps > 0 && f.dropped_deps == 0) {
      f.first_dropped = r.file + ": " + r.first_dropped;
    }
    f.dropped_deps += static_cast<std::int64_t>(r.dropped_deps);
    for (const work::EtNode& n : r.nodes) {
      switch (n.type) {
        case work::EtNodeType::Compute: ++(n.cpu ? f.host_ops : f.kernels); break;
        case work::EtNodeType::Metadata: ++f.metadata; break;
        case work::EtNodeType::Send:
          ++f.sends;
          f.send_bytes += n.comm_bytes;
          break;
        case work::EtNodeType::Recv: break;
        case work::EtNodeType::Collective: {
          auto& [count, bytes] = f.collectives[std::string(n.collective.name())];
          ++count;
          bytes += n.comm_bytes;
          break;
        }
      }
    }
  }
  return f;
}

}  // namespace hopsim::tools
