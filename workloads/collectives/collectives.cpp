// Ring, direct, flat and two-tier collectives as flows with dependencies.
#include "workloads/collectives/collectives.hpp"

#include <string>

#include <fmt/format.h>

#include "sim/assert.hpp"

namespace hopsim::work {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

PlanTaskId Collectives::start(std::span<const PlanTaskId> after) {
  // The base latency, once: every first flow waits for it.
  const PlanTaskId t = plan_.add_delay(0, latency_.base, phase_);
  plan_.set_label(t, "base latency");
  for (PlanTaskId a : after) {
    plan_.add_dependency(a, t);
  }
  return t;
}

PlanTaskId Collectives::flow(int src, int dst, std::int64_t bytes, PlanTaskId after,
                             std::string_view label) {
  const PlanTaskId t = plan_.add_flow(src, dst, Bytes{bytes}, phase_);
  plan_.set_label(t, label);
  const bool same_node = cluster_.node_of(src) == cluster_.node_of(dst);
  plan_.set_latency(t, same_node ? latency_.nvlink_hop : latency_.net_hop);
  plan_.add_dependency(after, t);
  return t;
}

Handle Collectives::send_recv(int src, int dst, Bytes size, std::span<const PlanTaskId> after) {
  const PlanTaskId s = start(after);
  return Handle{{flow(src, dst, size.n, s, "send")}};
}

Handle Collectives::ring(std::span<const int> ranks, int steps, Bytes size, int chunks,
                         std::span<const PlanTaskId> after) {
  const auto n = static_cast<std::int64_t>(ranks.size());
  HOPSIM_ASSERT(n >= 2, "a ring needs at least 2 ranks, got {}", n);
  HOPSIM_ASSERT(chunks >= 1, "chunks must be >= 1, got {}", chunks);
  const std::int64_t piece = ceil_div(ceil_div(size.n, n), chunks);
  const PlanTaskId s = start(after);
  const auto nr = static_cast<std::size_t>(n);
  const auto nc = static_cast<std::size_t>(chunks);
  std::vector<PlanTaskId> prev(nr * nc, s);
  std::vector<PlanTaskId> cur(nr * nc);
  std::vector<PlanTaskId> last_sent(nr, s);  // the previous flow on each rank's link
  for (int step = 0; step < steps; ++step) {
    const std::string label = fmt::format("step {}", step);
    for (std::size_t r = 0; r < nr; ++r) {
      const std::size_t left = (r + nr - 1) % nr;
      for (std::size_t c = 0; c < nc; ++c) {
        // Rank r forwards in this step the chunk it received from its left in the last one,
        // after the chunk it sent before it: a link carries one chunk at a time.
        const PlanTaskId t = flow(ranks[r], ranks[(r + 1) % nr], piece, last_sent[r], label);
        if (step > 0) {
          plan_.add_dependency(prev[left * nc + c], t);
        }
        cur[r * nc + c] = last_sent[r] = t;
      }
    }
    std::swap(prev, cur);
  }
  return Handle{prev};
}

Handle Collectives::all_gather_ring(std::span<const int> ranks, Bytes size, int chunks,
                                    std::span<const PlanTaskId> after) {
  return ring(ranks, static_cast<int>(ranks.size()) - 1, size, chunks, after);
}

Handle Collectives::reduce_scatter_ring(std::span<const int> ranks, Bytes size, int chunks,
                                        std::span<const PlanTaskId> after) {
  return ring(ranks, static_cast<int>(ranks.size()) - 1, size, chunks, after);
}

Handle Collectives::all_reduce_ring(std::span<const int> ranks, Bytes size, int chunks,
                                    std::span<const PlanTaskId> after) {
  return ring(ranks, 2 * (static_cast<int>(ranks.size()) - 1), size, chunks, after);
}

Handle Collectives::all_gather_direct(std::span<const int> ranks, Bytes size,
                                      std::span<const PlanTaskId> after) {
  const auto n = static_cast<std::int64_t>(ranks.size());
  HOPSIM_ASSERT(n >= 2, "an all-gather needs at least 2 ranks, got {}", n);
  const PlanTaskId s = start(after);
  Handle h;
  for (int src : ranks) {
    for (int dst : ranks) {
      if (src != dst) {
        h.done.push_back(flow(src, dst, ceil_div(size.n, n), s, "direct"));
      }
    }
  }
  return h;
}

ByteMatrix Collectives::uniform(std::size_t n, Bytes size) {
  ByteMatrix m{n, std::vector<std::int64_t>(n * n, size.n / static_cast<std::int64_t>(n))};
  return m;
}

Handle Collectives::all_to_all_flat(std::span<const int> ranks, const ByteMatrix& m,
                                    std::span<const PlanTaskId> after) {
  HOPSIM_ASSERT(m.n == ranks.size(), "matrix of {} ranks for {} ranks", m.n, ranks.size());
  const PlanTaskId s = start(after);
  Handle h;
  for (std::size_t i = 0; i < m.n; ++i) {
    for (std::size_t j = 0; j < m.n; ++j) {
      if (i != j && m.at(i, j) > 0) {
        h.done.push_back(flow(ranks[i], ranks[j], m.at(i, j), s, "pair"));
      }
    }
  }
  if (h.done.empty()) {
    h.done.push_back(s);
  }
  return h;
}

}  // namespace hopsim::work
