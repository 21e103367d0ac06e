// Collectives: the pipelined hop, send/recv, direct all-gather, flat all-to-all.
#include "workloads/collectives/collectives.hpp"

#include <algorithm>
#include <cmath>

#include "sim/assert.hpp"
#include "sim/int_math.hpp"

namespace hopsim::work {

std::string_view protocol_name(Protocol p) {
  constexpr std::array<std::string_view, 3> kNames{"simple", "ll", "ll128"};
  return kNames[static_cast<std::size_t>(p)];
}

PlanTaskId Collectives::start(const HopLatency& latency, std::span<const PlanTaskId> after) {
  const PlanTaskId t = plan_.add_delay(topo::GpuId{0}, latency.base, phase_);
  plan_.set_label(t, "base latency");
  for (PlanTaskId a : after) {
    plan_.add_dependency(a, t);
  }
  return t;
}

std::vector<PlanTaskId> Collectives::call_costs(std::span<const topo::GpuId> ranks,
                                                std::span<const CallCost> costs,
                                                std::span<const PlanTaskId> after) {
  std::vector<PlanTaskId> ready;
  for (const topo::GpuId r : ranks) {
    std::vector<PlanTaskId> before(after.begin(), after.end());
    for (const CallCost& cost : costs) {
      if (cost.time <= Time{}) {
        continue;
      }
      const PlanTaskId t = plan_.add_hold(r, cost.time, phase_, kCommStream);
      plan_.set_label(t, cost.label);
      for (const PlanTaskId b : before) {
        plan_.add_dependency(b, t);
      }
      before = {t};
    }
    ready.insert(ready.end(), before.begin(), before.end());
  }
  return ready;
}

std::vector<PlanTaskId> Collectives::sm_time(std::span<const topo::GpuId> ranks,
                                             std::span<const Time> times,
                                             std::span<const PlanTaskId> after) {
  std::vector<PlanTaskId> out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (times[i] <= Time{}) {
      continue;
    }
    const PlanTaskId t = plan_.add_hold(ranks[i], times[i], phase_, plan_.stream("ep_sms"));
    plan_.set_label(t, "sm_bound");
    for (const PlanTaskId b : after) {
      plan_.add_dependency(b, t);
    }
    out.push_back(t);
  }
  return out;
}

Collectives::Hop Collectives::flow_hop(topo::GpuId src, topo::GpuId dst, std::int64_t bytes,
                                       std::span<const PlanTaskId> after, Time arrival,
                                       std::string_view label, double efficiency) {
  const PlanTaskId sent = plan_.add_flow(src, dst, Bytes{bytes}, phase_);
  plan_.set_latency(sent, Time{});  // paid on arrival, below
  plan_.set_label(sent, label);
  plan_.set_efficiency(sent, efficiency);
  for (PlanTaskId a : after) {
    plan_.add_dependency(a, sent);
  }
  const PlanTaskId arrived = plan_.add_delay(dst, arrival, phase_);
  plan_.add_dependency(sent, arrived);
  return {sent, arrived};
}

Collectives::Hop Collectives::hop(topo::GpuId src, topo::GpuId dst, std::int64_t bytes,
                                  std::span<const PlanTaskId> after, const HopLatency& latency,
                                  std::string_view label, double efficiency) {
  const bool same_node = cluster_.node_of(src) == cluster_.node_of(dst);
  return flow_hop(src, dst, bytes, after, same_node ? latency.nvlink_hop : latency.net_hop, label,
                  efficiency);
}

Collectives::Hop Collectives::route_hop(topo::GpuId src, topo::GpuId dst, std::int64_t bytes,
                                        std::span<const PlanTaskId> after, std::string_view label,
                                        double efficiency) {
  const topo::Route route = cluster_.route(src, dst);
  return flow_hop(src, dst, bytes, after, cluster_.latency(route.span()), label, efficiency);
}

Handle Collectives::send_recv(topo::GpuId src, topo::GpuId dst, Bytes size, Protocol protocol,
                              std::span<const PlanTaskId> after) {
  const HopLatency& latency = nccl_.ring_latency(protocol);
  const PlanTaskId s = start(latency, after);
  const PlanTaskId first[] = {s};
  const bool net = cluster_.node_of(src) != cluster_.node_of(dst);
  const double efficiency =
      nccl_.protocol_efficiency(protocol) * (net ? nccl_.p2p_net_efficiency : 1.0);
  return Handle{{hop(src, dst, size.n, first, latency, "send", efficiency).arrived}};
}

Handle Collectives::all_gather_direct(std::span<const topo::GpuId> ranks, Bytes size,
                                      std::span<const PlanTaskId> after) {
  const auto n = static_cast<std::int64_t>(ranks.size());
  HOPSIM_ASSERT(n >= 2, "an all-gather needs at least 2 ranks, got {}", n);
  const HopLatency& latency = nccl_.ring_latency(Protocol::Simple);
  const PlanTaskId first[] = {start(latency, after)};
  Handle h;
  for (const topo::GpuId src : ranks) {
    for (const topo::GpuId dst : ranks) {
      if (src != dst) {
        h.done.push_back(hop(src, dst, ceil_div(size.n, n), first, latency, "direct").arrived);
      }
    }
  }
  return h;
}

ByteMatrix Collectives::uniform(std::size_t n, Bytes size) {
  ByteMatrix m{n, std::vector<std::int64_t>(n * n, size.n / static_cast<std::int64_t>(n))};
  return m;
}

Handle Collectives::all_to_all_flat(std::span<const topo::GpuId> ranks, const ByteMatrix& m,
                                    std::span<const PlanTaskId> after) {
  HOPSIM_ASSERT(m.n == ranks.size(), "matrix of {} ranks for {} ranks", m.n, ranks.size());
  const HopLatency& latency = nccl_.ring_latency(Protocol::Simple);
  const PlanTaskId first[] = {start(latency, after)};
  Handle h;
  for (std::size_t i = 0; i < m.n; ++i) {
    for (std::size_t j = 0; j < m.n; ++j) {
      if (i != j && m.at(i, j) > 0) {
        h.done.push_back(hop(ranks[i], ranks[j], m.at(i, j), first, latency, "pair").arrived);
      }
    }
  }
  if (h.done.empty()) {
    h.done.push_back(first[0]);
  }
  return h;
}

Handle Collectives::all_to_all_low_latency(std::span<const topo::GpuId> ranks, const ByteMatrix& m,
                                           bool combine, std::span<const PlanTaskId> after,
                                           Time call) {
  HOPSIM_ASSERT(m.n == ranks.size(), "matrix of {} ranks for {} ranks", m.n, ranks.size());
  const PlanTaskId first[] = {start(HopLatency{call, Time{}, Time{}}, after)};
  Handle h;
  for (std::size_t i = 0; i < m.n; ++i) {
    for (std::size_t j = 0; j < m.n; ++j) {
      if (i == j || m.at(i, j) <= 0) {
        continue;  // selections of the GPU's own experts stay on it
      }
      const topo::GpuId src{combine ? ranks[j] : ranks[i]};
      const topo::GpuId dst{combine ? ranks[i] : ranks[j]};
      const topo::Route route = cluster_.nic_route(src, dst);
      const PlanTaskId f = plan_.add_flow(src, dst, Bytes{m.at(i, j)}, phase_);
      plan_.set_nics_only(f);
      plan_.set_latency(f, Time{});
      plan_.set_label(f, "rdma");
      plan_.add_dependency(first[0], f);
      const PlanTaskId arrived = plan_.add_delay(dst, cluster_.latency(route.span()), phase_);
      plan_.add_dependency(f, arrived);
      h.done.push_back(arrived);
    }
  }
  if (h.done.empty()) {
    h.done.push_back(first[0]);
  }
  return h;
}

namespace {

// The share of `link` a library's `rate` is (0: the link's own), at most 1.
double share_of(Bandwidth rate, Bandwidth link) {
  if (rate.bytes_per_s <= 0 || link.bytes_per_s <= 0) {
    return 1.0;
  }
  return std::min(1.0, rate.bytes_per_s / link.bytes_per_s);
}

}  // namespace

Handle Collectives::all_to_all_paced(std::span<const topo::GpuId> ranks, const ByteMatrix& m,
                                     const PacedOptions& options,
                                     std::span<const PlanTaskId> after) {
  HOPSIM_ASSERT(m.n == ranks.size(), "matrix of {} ranks for {} ranks", m.n, ranks.size());
  // The call's floor (its kernels filling and draining their pipeline) holds every rank's
  // communication stream, so that it counts as the exchange's communication where the rank
  // waits for it; a flow starts once both its ranks' floors have passed. No floor: one start.
  const PlanTaskId joined = start(HopLatency{Time{}, Time{}, Time{}}, after);
  std::vector<PlanTaskId> floors(ranks.size(), joined);
  if (options.call > Time{}) {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      floors[r] = plan_.add_hold(ranks[r], options.call, phase_, kCommStream);
      plan_.set_label(floors[r], "floor");
      plan_.add_dependency(joined, floors[r]);
    }
  }
  const double nvlink = share_of(options.nvlink, cluster_.spec().nvlink.bandwidth);
  const double nic = share_of(options.nic, cluster_.spec().nic.bandwidth);
  Handle h;
  for (std::size_t i = 0; i < m.n; ++i) {
    for (std::size_t j = 0; j < m.n; ++j) {
      if (i == j || m.at(i, j) <= 0) {
        continue;
      }
      const PlanTaskId ends[] = {floors[i], floors[j]};
      const std::span<const PlanTaskId> first(ends, floors[i] == floors[j] ? 1 : 2);
      const topo::GpuId src{options.combine ? ranks[j] : ranks[i]};
      const topo::GpuId dst{options.combine ? ranks[i] : ranks[j]};
      const bool same_node = cluster_.node_of(src) == cluster_.node_of(dst);
      h.done.push_back(
          route_hop(src, dst, m.at(i, j), first, "paced", same_node ? nvlink : nic).arrived);
    }
  }
  if (h.done.empty()) {
    h.done = options.call > Time{} ? floors : std::vector<PlanTaskId>{joined};
  }
  return h;
}

}  // namespace hopsim::work
