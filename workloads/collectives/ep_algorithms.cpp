// The EP exchange table's columns (ep_algorithms.hpp): each algorithm's builder over
// Collectives, its flow bound, and what its library's kernels reach; the table's names.
#include "workloads/collectives/ep_algorithms.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "workloads/compute/enum_names.hpp"

namespace hopsim::work {
namespace {

ByteMatrix transposed(const ByteMatrix& m) {
  ByteMatrix t{m.n, std::vector<std::int64_t>(m.bytes.size())};
  for (std::size_t i = 0; i < m.n; ++i) {
    for (std::size_t j = 0; j < m.n; ++j) {
      t.bytes[j * m.n + i] = m.at(i, j);
    }
  }
  return t;
}

bool is_combine(const Exchange& x) {
  return x.op == ExchangeOp::Combine;
}

}  // namespace

// Flat: NCCL's send/recv per pair, at its latencies and the links' rate; combine sends each
// pair's bytes back.
Handle flat_exchange(Collectives& c, const Exchange& x, const KernelReach& /*reach*/) {
  if (is_combine(x)) {
    return c.all_to_all_flat(x.ranks, transposed(x.bytes.gpu), x.after);
  }
  return c.all_to_all_flat(x.ranks, x.bytes.gpu, x.after);
}

Handle two_tier_exchange(Collectives& c, const Exchange& x, const KernelReach& reach) {
  return c.all_to_all_two_tier(
      x.ranks, x.bytes, TwoTierOptions{is_combine(x), x.chunk_bytes, reach.nvlink_share, x.pieces, reach.intranode_share},
      x.after);
}

// A message per (token, expert) selection; an exchange without routing (a uniform matrix) has
// no selections, and sends each pair's bytes as one.
Handle low_latency_exchange(Collectives& c, const Exchange& x, const KernelReach& reach) {
  const ByteMatrix& m = x.bytes.selections.n > 0 ? x.bytes.selections : x.bytes.gpu;
  return c.all_to_all_low_latency(x.ranks, m, is_combine(x), x.after, reach.call);
}

double pair_flows(const ExchangeShape& s) {
  return s.ranks * (s.ranks - 1);
}

// Per source and node (ranks / min(ranks, GPUs per node) of them), each InfiniBand piece
// (streamed: at most two) and its forwards to every GPU there.
double two_tier_flows(const ExchangeShape& s) {
  const double pieces = s.streamed ? std::min(s.pieces, 2.0) : s.pieces;
  return s.ranks * s.ranks / std::min(s.ranks, s.gpus_per_node) * pieces * (s.gpus_per_node + 1);
}

KernelReach links_only(const LibraryConstants& /*k*/, ExchangeOp /*op*/,
                       std::int64_t /*comm_sms*/) {
  return {};
}

KernelReach deepep_normal(const LibraryConstants& k, ExchangeOp op, std::int64_t comm_sms) {
  const bool dispatch = op == ExchangeOp::Dispatch;
  return {k.deepep.forward_efficiency(comm_sms), Time{}, k.deepep.intranode_efficiency(comm_sms),
          dispatch ? k.deepep.layout_call : Time{}, dispatch ? k.deepep.notify_call : Time{}};
}

KernelReach deepep_low_latency(const LibraryConstants& k, ExchangeOp op,
                               std::int64_t /*comm_sms*/) {
  return {1.0, ll_call_time(&k.deepep, op == ExchangeOp::Combine)};
}

std::int64_t deepep_normal_chunk_tokens(std::int64_t ranks, ExchangeOp op) {
  return deepep_chunk_tokens(ranks, op == ExchangeOp::Combine);
}

// The fixed costs per call first (their own labelled tasks on every rank; notify only when the
// exchange crosses nodes), then the exchange after them.
Handle add_exchange(Collectives& c, EpAlgorithm a, const Exchange& x) {
  const EpAlgorithmRow& row = ep_algorithm_row(a);
  const KernelReach reach = row.reach(x.constants, x.op, x.comm_sms);
  const Time notify = x.bytes.nodes > 1 ? reach.notify : Time{};
  if (!x.new_layout || (reach.layout == Time{} && notify == Time{})) {
    return row.build(c, x, reach);
  }
  const CallCost costs[] = {{"deepep_layout", reach.layout}, {"deepep_notify", notify}};
  const std::vector<PlanTaskId> ready = c.call_costs(x.ranks, costs, x.after);
  Exchange after_calls = x;
  after_calls.after = ready;
  return row.build(c, after_calls, reach);
}

std::int64_t default_chunk_tokens(EpAlgorithm a, std::int64_t ranks, ExchangeOp op) {
  const EpAlgorithmRow& row = ep_algorithm_row(a);
  return row.chunk_tokens != nullptr ? row.chunk_tokens(ranks, op) : 0;
}

std::string ep_algorithm_list(bool (*keep)(const EpAlgorithmRow&), bool quoted) {
  return row_names(kEpAlgorithms, keep, quoted, " or ");
}

std::string ep_algorithms_described() {
  std::string out;
  for (const EpAlgorithmRow& row : kEpAlgorithms) {
    std::vector<std::string> keys;
    for (const std::string_view key : row.cluster_keys) {
      if (!key.empty()) {
        keys.emplace_back(key);
      }
    }
    out += fmt::format("{}{}: {}{}", out.empty() ? "" : "; ", row.name, row.how,
                       keys.empty() ? "" : ", reading " + name_list(keys, " and "));
  }
  return out;
}

}  // namespace hopsim::work
