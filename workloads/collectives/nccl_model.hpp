// What collectives know of NCCL on a cluster: latency constants per algorithm and protocol,
// protocol efficiencies, NVLS, and NCCL's own cost model (its tuner) for choosing algorithms.
//
// Latencies follow NCCL's cost model (src/graph/tuning.cc): a base latency per collective, and
// per step a hop latency that depends on whether the step stays in a node (NVLink) or crosses
// the network. Its predicted time is latency + bytes / bandwidth with
//   ring   latency = base + (steps - inter_steps) nvlink_hop + inter_steps net_hop,
//          steps = 2(n-1) for all-reduce, n-1 for all-gather and reduce-scatter,
//          inter_steps = 2(nodes-1) and nodes-1;
//   tree   latency = base + 2 ((ranks per node - 1) nvlink_hop + log2(nodes) net_hop);
//   nvls   latency = nvlink_hop (+ net_hop across nodes).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sim/units.hpp"

namespace hopsim::work {

enum class Protocol : std::uint8_t { Simple, Ll, Ll128 };
inline constexpr std::array<Protocol, 3> kProtocols{Protocol::Simple, Protocol::Ll,
                                                    Protocol::Ll128};

/// "simple", "ll", "ll128".
std::string_view protocol_name(Protocol p);

/// NCCL's latency constants of one algorithm and protocol.
struct HopLatency {
  Time base = Time::ns(8'400);
  Time nvlink_hop = Time::ns(3'400);
  Time net_hop = Time::ns(14'000);
};

/// Defaults are NCCL 2.19+'s (src/graph/tuning.cc, baseLat and hwLat, NVLink and NET), which a
/// cluster file may replace.
struct NcclModel {
  /// Ring latencies by protocol (simple, ll, ll128).
  std::array<HopLatency, 3> ring{HopLatency{Time::ns(8'400), Time::ns(3'400), Time::ns(14'000)},
                                 HopLatency{Time::ns(6'600), Time::ns(600), Time::ns(2'700)},
                                 HopLatency{Time::ns(14'000), Time::ns(1'900), Time::ns(4'000)}};
  /// Tree latencies by protocol.
  std::array<HopLatency, 3> tree{HopLatency{Time::ns(8'400), Time::ns(4'000), Time::ns(14'000)},
                                 HopLatency{Time::ns(6'800), Time::ns(600), Time::ns(5'000)},
                                 HopLatency{Time::ns(14'000), Time::ns(1'250), Time::ns(8'500)}};
  /// NVLS (NVSwitch reduction; simple only): base 0, nvlink_hop inside, net_hop across nodes.
  HopLatency nvls{Time{}, Time::us(25), Time::us(18)};
  /// Payload bytes per wire byte by protocol: LL sends a flag with every 8 bytes (0.5), LL128
  /// one 8-byte flag per 128-byte line (120/128).
  std::array<double, 3> efficiency{1.0, 0.5, 120.0 / 128.0};
  /// Whether the NVSwitch can reduce (NVLS), and the fraction of NVLink bandwidth it reaches.
  bool nvls_supported = false;
  double nvls_efficiency = 1.0;
  /// The share of a link's rate NCCL's send/recv between nodes reaches (context parallelism's
  /// ring, pipeline transfers); 1: the link's achievable rate.
  double p2p_net_efficiency = 1.0;
  /// The protocol a collective uses unless it names one.
  Protocol protocol = Protocol::Simple;

  const HopLatency& ring_latency(Protocol p) const { return ring[static_cast<std::size_t>(p)]; }
  const HopLatency& tree_latency(Protocol p) const { return tree[static_cast<std::size_t>(p)]; }
  double protocol_efficiency(Protocol p) const { return efficiency[static_cast<std::size_t>(p)]; }
};

}  // namespace hopsim::work
