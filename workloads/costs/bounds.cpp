// Time and byte bounds of a plan, from the cluster's slowest link.
#include "workloads/costs/bounds.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace hopsim::work {
namespace {

// Byte totals are summed in int64 (Bytes); keep a margin.
constexpr double kMaxBytes = 4e18;

double slowest_bytes_per_s(const topo::Spec& spec) {
  return std::min(spec.nvlink.bandwidth.bytes_per_s,
                  spec.nic.bandwidth.bytes_per_s / (spec.oversubscription * spec.spines));
}

}  // namespace

Time longest_route_latency(const topo::Spec& cluster) {
  return cluster.software_overhead +
         2 * (cluster.nvlink.latency + cluster.nic.latency + cluster.spine_latency);
}

double time_bound_s(const PlanLoad& load, const topo::Spec& cluster) {
  return load.fixed.seconds() + load.flows * (load.flow_latency.seconds() + 3e-12) +
         load.bytes / slowest_bytes_per_s(cluster);
}

PlanLoad layer_load(double flows, double bytes, double compute_s, const topo::Spec& cluster,
                    const NcclModel& nccl) {
  PlanLoad load;
  load.flows = flows;
  load.bytes = bytes;
  load.flow_latency = longest_route_latency(cluster);
  Time base = nccl.nvls.nvlink_hop + nccl.nvls.net_hop;
  for (Protocol p : kProtocols) {
    for (const HopLatency* l : {&nccl.ring_latency(p), &nccl.tree_latency(p)}) {
      load.flow_latency = std::max({load.flow_latency, l->nvlink_hop, l->net_hop});
      base = std::max(base, l->base);
    }
  }
  load.flow_latency += base;  // a flow may start a collective of its own
  load.fixed = Time::from_seconds_ceil(std::min(compute_s, Time::max().seconds() / 4));
  return load;
}

std::optional<std::string> load_problem(const PlanLoad& load, const topo::Spec& cluster,
                                        std::string_view subject) {
  if (!(load.bytes <= kMaxBytes)) {
    return fmt::format("{} would move {:.3g} bytes in all; at most {:.3g} can be counted", subject,
                       load.bytes, kMaxBytes);
  }
  const double bound_s = time_bound_s(load, cluster);
  const double limit_s = Time::max().seconds() / 2;
  if (!(bound_s <= limit_s)) {
    return fmt::format("{} may need up to {:.3g} s of simulated time ({:.3g} bytes at the "
                       "slowest link's {:.3g} B/s, plus start times and latencies); at most "
                       "{:.3g} s can be simulated",
                       subject, bound_s, load.bytes, slowest_bytes_per_s(cluster), limit_s);
  }
  return std::nullopt;
}

std::optional<std::string> token_bytes_problem(std::int64_t hidden, double bytes_per_element) {
  const double token = static_cast<double>(hidden) * bytes_per_element;
  if (std::llround(token) >= 1) {
    return std::nullopt;
  }
  return fmt::format("{} elements of {:g} bytes make {:.3g} bytes per token, which rounds to 0: "
                     "a token carries at least 1 byte",
                     hidden, bytes_per_element, token);
}

}  // namespace hopsim::work
