// Cluster description checks: sizes, bandwidths, latencies, fabric shape, resource bounds.
#include "topology/spec_check.hpp"

#include <cmath>

#include <fmt/format.h>

#include "topology/leaves.hpp"

namespace hopsim::topo {
namespace {

bool valid_bandwidth(Bandwidth bw) { return bw.bytes_per_s > 0 && std::isfinite(bw.bytes_per_s); }

void check_link(const LinkParams& link, const char* path, Problems& out) {
  if (!valid_bandwidth(link.bandwidth)) {
    out.push_back({path, fmt::format("bandwidth must be > 0 and finite, got {} B/s",
                                     link.bandwidth.bytes_per_s)});
  }
  if (link.peak.bytes_per_s != 0 && !valid_bandwidth(link.peak)) {
    out.push_back({path, fmt::format("peak must be > 0 and finite, got {} B/s",
                                     link.peak.bytes_per_s)});
  }
  if (link.latency < Time{}) {
    out.push_back({path, fmt::format("latency must be >= 0, got {} ps", link.latency.count_ps())});
  }
}

void check_fabric(const Spec& spec, Problems& out) {
  if (spec.nodes_per_leaf < 0) {
    out.push_back({"/fabric/nodes_per_leaf",
                   fmt::format("must be >= 0, got {}", spec.nodes_per_leaf)});
  } else if (spec.nodes_per_leaf != 0 && spec.nodes % spec.nodes_per_leaf != 0) {
    out.push_back({"/fabric/nodes_per_leaf",
                   fmt::format("must divide nodes ({}), got {}", spec.nodes, spec.nodes_per_leaf)});
  }
  if (spec.spines < 1) {
    out.push_back({"/fabric/spines", fmt::format("must be >= 1, got {}", spec.spines)});
  }
  if (!(spec.oversubscription >= 1) || !std::isfinite(spec.oversubscription)) {
    out.push_back({"/fabric/oversubscription",
                   fmt::format("must be >= 1 (downlink over uplink capacity), got {}",
                               spec.oversubscription)});
  }
  if (spec.spine_latency < Time{}) {
    out.push_back({"/fabric/spine_latency_us", "must be >= 0"});
  }
}

}  // namespace

std::int64_t link_count(const Spec& spec) {
  const std::int64_t gpus = std::int64_t{spec.nodes} * spec.gpus_per_node;
  const std::int64_t leaves = leaf_count(spec);
  return 4 * gpus + (leaves > 1 ? 2 * leaves * spec.spines : 0);
}

Problems check_spec(const Spec& spec) {
  Problems out;
  if (spec.nodes < 1) {
    out.push_back({"/nodes", fmt::format("must be >= 1, got {}", spec.nodes)});
  }
  if (spec.gpus_per_node < 1) {
    out.push_back({"/gpus_per_node", fmt::format("must be >= 1, got {}", spec.gpus_per_node)});
  }
  if (!out.empty()) {
    return out;  // the counts below would be meaningless
  }
  const std::int64_t gpus = std::int64_t{spec.nodes} * spec.gpus_per_node;
  if (gpus > kMaxGpus) {
    out.push_back({"/nodes", fmt::format("{} nodes x {} GPUs = {} GPUs; at most {} are supported",
                                         spec.nodes, spec.gpus_per_node, gpus, kMaxGpus)});
    return out;
  }
  check_link(spec.nvlink, "/nvlink", out);
  check_link(spec.nic, "/nic", out);
  if (spec.software_overhead < Time{}) {
    out.push_back({"/software_overhead_us", "must be >= 0"});
  }
  check_fabric(spec, out);
  if (out.empty() && link_count(spec) > kMaxLinks) {
    out.push_back({"/fabric/spines",
                   fmt::format("{} leaves x {} spines make {} links with the GPUs' own; at most "
                               "{} are supported",
                               leaf_count(spec), spec.spines, link_count(spec), kMaxLinks)});
  }
  return out;
}

}  // namespace hopsim::topo
