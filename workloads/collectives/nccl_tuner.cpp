// NCCL's cost model over this cluster's bandwidths.
#include "workloads/collectives/nccl_tuner.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "sim/assert.hpp"

namespace hopsim::work {
namespace {

// Ring: base + (steps - inter) nvlink_hop + inter net_hop (NCCL's ring latency).
double ring_latency_s(const HopLatency& l, const TunerInput& in) {
  const int steps = in.coll == NcclColl::AllReduce ? 2 * (in.ranks - 1) : in.ranks - 1;
  const int inter = in.nodes == 1 ? 0 : in.coll == NcclColl::AllReduce ? 2 * (in.nodes - 1)
                                                                       : in.nodes - 1;
  return l.base.seconds() + (steps - inter) * l.nvlink_hop.seconds() +
         inter * l.net_hop.seconds();
}

// Tree: base + 2 ((ranks per node - 1) nvlink_hop + log2(nodes) net_hop).
double tree_latency_s(const HopLatency& l, const TunerInput& in) {
  const int per_node = in.ranks / in.nodes;
  const int log_nodes = static_cast<int>(std::bit_width(static_cast<unsigned>(in.nodes))) - 1;
  return l.base.seconds() +
         2 * ((per_node - 1) * l.nvlink_hop.seconds() + log_nodes * l.net_hop.seconds());
}

}  // namespace

std::string_view nccl_algo_name(NcclAlgo a) {
  constexpr std::array<std::string_view, 3> kNames{"ring", "tree", "nvls"};
  return kNames[static_cast<std::size_t>(a)];
}

std::vector<Prediction> nccl_predictions(const NcclModel& nccl, const TunerInput& in) {
  HOPSIM_ASSERT(in.ranks >= 2 && in.nodes >= 1, "{} ranks on {} nodes", in.ranks, in.nodes);
  const double bus = in.nodes == 1 ? in.nvlink.bytes_per_s
                                   : std::min(in.nvlink.bytes_per_s, in.node_nics.bytes_per_s);
  const double bytes = static_cast<double>(in.size.n);
  const int steps = in.coll == NcclColl::AllReduce ? 2 * (in.ranks - 1) : in.ranks - 1;
  std::vector<Prediction> out;
  const auto add = [&](NcclAlgo a, Protocol p, double latency_s, double algbw) {
    out.push_back({a, p, latency_s, algbw, latency_s + bytes / algbw});
  };
  for (Protocol p : kProtocols) {
    const double eff = nccl.protocol_efficiency(p);
    add(NcclAlgo::Ring, p, ring_latency_s(nccl.ring_latency(p), in),
        bus * eff * in.ranks / steps);
    if (in.coll == NcclColl::AllReduce) {
      add(NcclAlgo::Tree, p, tree_latency_s(nccl.tree_latency(p), in), bus * eff * 0.92 * 0.5);
    }
  }
  if (in.coll == NcclColl::AllReduce && in.nodes == 1 && nccl.nvls_supported) {
    add(NcclAlgo::Nvls, Protocol::Simple, nccl.nvls.nvlink_hop.seconds(),
        in.nvlink.bytes_per_s * nccl.nvls_efficiency);
  }
  return out;
}

Prediction fastest(const std::vector<Prediction>& candidates) {
  HOPSIM_ASSERT(!candidates.empty(), "no candidate algorithm");
  return *std::min_element(candidates.begin(), candidates.end(),
                           [](const Prediction& a, const Prediction& b) {
                             return a.time_s < b.time_s;
                           });
}

}  // namespace hopsim::work
