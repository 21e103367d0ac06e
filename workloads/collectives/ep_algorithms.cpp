// The EP exchange table's columns (ep_algorithms.hpp): each algorithm's builder over
// Collectives, its flow bound, and what its library's kernels reach; the table's names.
#include "workloads/collectives/ep_algorithms.hpp"

#include <algorithm>
#include <numeric>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "sim/assert.hpp"
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

namespace {

// The cost of exchange `x`'s op on its path: its intranode costs when every rank is on one
// node, else its internode ones.
const PathCost& path_cost(const Exchange& x, const KernelReach& reach) {
  HOPSIM_ASSERT(reach.rates != nullptr, "a paced exchange without its library's rates");
  return reach.rates->cost(x.bytes.nodes > 1, static_cast<std::size_t>(x.op));
}

// What the library's SMs bind (PathCost::sm_rate): each rank's SMs handle the bytes it sends
// to each destination (`bytes`, a row per rank), pair by pair, at the cost's per-pair time and
// rate, shared by the SMs held (comm_sms, else the library's own on this GPU). The rank's
// exchange is not done before that time from its start: that time held per rank beside the
// flows (Collectives::sm_time), added to the handle. None where the cost states no SM rate;
// no per-pair time where the exchange states no token size.
Handle sm_bound(Collectives& c, const Exchange& x, const KernelReach& reach, Handle moved,
                std::span<const std::int64_t> bytes, std::size_t columns) {
  const double per_byte =
      path_cost(x, reach).sm_seconds_per_byte(static_cast<double>(x.token_size));
  if (per_byte <= 0) {
    return moved;
  }
  const auto sms = static_cast<double>(reach.rates->held_sms(x.comm_sms));
  std::vector<Time> times;
  for (std::size_t i = 0; i < x.ranks.size(); ++i) {
    const auto row = bytes.subspan(i * columns, columns);
    const auto sent = static_cast<double>(std::accumulate(row.begin(), row.end(), std::int64_t{0}));
    times.push_back(Time::from_seconds(sent * per_byte / sms));
  }
  const std::vector<PlanTaskId> held = c.sm_time(x.ranks, times, x.after);
  moved.done.insert(moved.done.end(), held.begin(), held.end());
  return moved;
}

}  // namespace

// A library a data file prices: a message per selection (each pair's as one flow; without
// routing, each pair's bytes), after its floor, at its rates (through the NICs, at most its
// per-pair rate times the remote ranks).
Handle paced_exchange(Collectives& c, const Exchange& x, const KernelReach& reach) {
  const PathCost& cost = path_cost(x, reach);
  const ByteMatrix& m = x.bytes.selections.n > 0 ? x.bytes.selections : x.bytes.gpu;
  // Each GPU's ranks on other nodes (the group spread evenly over its nodes).
  const auto ranks = static_cast<double>(x.ranks.size());
  const double remote = ranks - ranks / static_cast<double>(std::max<std::size_t>(x.bytes.nodes, 1));
  const Handle moved = c.all_to_all_paced(
      x.ranks, m, PacedOptions{is_combine(x), cost.floor, cost.nvlink, cost.nic_rate(remote)},
      x.after);
  return sm_bound(c, x, reach, moved, m.bytes, m.n);
}

// A relaying library a data file prices: each token once per destination node through the
// NICs to its same-rail GPU there, then over NVLink, after its floor, at its rates (through
// the NICs, at most its per-pair rate times the other nodes: each GPU sends to one GPU per
// node).
Handle relayed_exchange(Collectives& c, const Exchange& x, const KernelReach& reach) {
  const PathCost& cost = path_cost(x, reach);
  const double peers = static_cast<double>(std::max<std::size_t>(x.bytes.nodes, 1) - 1);
  const Handle moved = c.all_to_all_paced_relayed(
      x.ranks, x.bytes, PacedOptions{is_combine(x), cost.floor, cost.nvlink, cost.nic_rate(peers)},
      x.after);
  // Its SMs send each token once per destination node, its own included.
  return sm_bound(c, x, reach, moved, x.bytes.to_node, std::max<std::size_t>(x.bytes.nodes, 1));
}

namespace {

// Each rank's bytes of its own tokens: as the exchange gives them, else its routing matrix's
// mean row (a benchmark's size per rank).
std::int64_t own_bytes(const Exchange& x) {
  if (x.own_bytes > 0) {
    return x.own_bytes;
  }
  const auto n = static_cast<std::int64_t>(x.bytes.gpu.n);
  const std::int64_t all =
      std::accumulate(x.bytes.gpu.bytes.begin(), x.bytes.gpu.bytes.end(), std::int64_t{0});
  return n > 0 ? all / n : 0;
}

// NCCL's rings over the group, one per GPU of a node when the group crosses nodes (each
// channel on its own NIC), streamed: `steps` steps of `size` bytes in all.
Handle megatron_ring(Collectives& c, const Exchange& x, Protocol protocol, std::int64_t size,
                     std::span<const PlanTaskId> after) {
  const std::size_t nodes = std::max<std::size_t>(x.bytes.nodes, 1);
  RingOptions options;
  options.protocol = protocol;
  options.channels = nodes > 1 ? static_cast<int>(std::max<std::size_t>(x.ranks.size() / nodes, 1))
                               : 1;
  options.streamed = true;
  return c.ring(x.ranks, static_cast<int>(x.ranks.size()) - 1, Bytes{size}, options, after);
}

// The routing matrix `m` (bytes of `token_bytes` per token) as `per_token` bytes per token.
TwoTierMatrix per_token(const TwoTierMatrix& m, std::int64_t token_bytes, std::int64_t per_token) {
  TwoTierMatrix out = m;
  for (auto* v : {&out.gpu.bytes, &out.selections.bytes, &out.to_node}) {
    for (std::int64_t& b : *v) {
      b = b / token_bytes * per_token;
    }
  }
  return out;
}

}  // namespace

// Megatron's alltoall dispatcher (token_dispatcher.py, MoEAlltoAllTokenDispatcher): dispatch
// all-gathers every rank's token count per expert over the group (preprocess's
// gather_from_sequence_parallel_region, LL: a few hundred bytes), the host waits for it (the
// splits' D2H copy before the all-to-all), then NCCL's all-to-all-v of the permuted tokens and
// one of their probabilities; combine is the tokens' all-to-all-v back. The permute kernels
// around it are the layer's (EpAlgorithmRow::permutes_locally).
Handle megatron_alltoall_exchange(Collectives& c, const Exchange& x, const KernelReach& reach) {
  std::vector<PlanTaskId> after(x.after.begin(), x.after.end());
  const bool metadata = !is_combine(x) && x.token_bytes > 0 && x.ranks.size() > 1;
  if (metadata && x.experts > 0) {
    const auto n = static_cast<std::int64_t>(x.ranks.size());
    after = megatron_ring(c, x, Protocol::Ll, n * x.experts * kMegatronCountBytes, after).done;
  }
  Exchange tokens = x;
  tokens.after = after;
  const Handle moved = paced_exchange(c, tokens, reach);
  if (!metadata) {
    return moved;
  }
  const TwoTierMatrix probs = per_token(x.bytes, x.token_bytes, kMegatronProbBytes);
  const Exchange weights{
      .ranks = x.ranks, .bytes = probs, .op = x.op, .constants = x.constants, .after = moved.done};
  return paced_exchange(c, weights, reach);
}

// Megatron's allgather dispatcher (MoEAllGatherTokenDispatcher): dispatch all-gathers every
// rank's routing map and probabilities (one byte and two per expert and token), then its
// tokens, over the group; combine reduce-scatters the experts' outputs back, the same bytes
// as the tokens' gather. Each GPU sends (n - 1)/n of the n ranks' tokens.
Handle megatron_allgather_exchange(Collectives& c, const Exchange& x,
                                   const KernelReach& /*reach*/) {
  const auto n = static_cast<std::int64_t>(x.ranks.size());
  const std::int64_t own = own_bytes(x);
  std::vector<PlanTaskId> after(x.after.begin(), x.after.end());
  if (n < 2) {
    return Handle{after};  // one rank: nothing to gather
  }
  if (!is_combine(x) && x.token_bytes > 0 && x.experts > 0) {
    const std::int64_t tokens = own / x.token_bytes;
    after = megatron_ring(c, x, Protocol::Simple,
                          n * tokens * x.experts * (kMegatronMapBytes + kMegatronProbBytes), after)
                .done;
  }
  return megatron_ring(c, x, Protocol::Simple, n * own, after);
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

// Alltoall: the tokens' and probabilities' all-to-alls, and the counts' rings (a channel per
// GPU of a node). Allgather: two gathers' rings.
double megatron_alltoall_flows(const ExchangeShape& s) {
  return 2 * pair_flows(s) + s.ranks * s.gpus_per_node;
}

double megatron_allgather_flows(const ExchangeShape& s) {
  return 2 * s.ranks * s.gpus_per_node;
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

namespace {

// The rates of the library data file `name` prices, as the experiment read them for the
// cluster's GPU (the checks refuse a workload that picks a library without them).
KernelReach file_rates(const LibraryConstants& k, std::string_view name) {
  const LibraryFile* f = k.files.find(name);
  KernelReach reach;
  reach.rates = f != nullptr && f->rates ? &*f->rates : nullptr;
  return reach;
}

}  // namespace

KernelReach pplx_kernels_rates(const LibraryConstants& k, ExchangeOp /*op*/,
                               std::int64_t /*comm_sms*/) {
  return file_rates(k, "pplx_kernels");
}

KernelReach nccl_all_to_all_rates(const LibraryConstants& k, ExchangeOp /*op*/,
                                  std::int64_t /*comm_sms*/) {
  return file_rates(k, "nccl_all_to_all");
}

KernelReach hybrid_ep_rates(const LibraryConstants& k, ExchangeOp /*op*/,
                            std::int64_t /*comm_sms*/) {
  return file_rates(k, "hybrid_ep");
}

KernelReach uccl_ep_rates(const LibraryConstants& k, ExchangeOp /*op*/,
                          std::int64_t /*comm_sms*/) {
  return file_rates(k, "uccl_ep");
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

namespace {

std::string missing_constants_of(const EpAlgorithmRow& row, const LibraryConstants& k) {
  // A cluster file without DeepEP's constants lists "deepep" without rates (cluster_config.cpp);
  // constants built in code list nothing and keep DeepEpModel's defaults.
  if (const LibraryFile* d = k.files.find("deepep");
      d != nullptr && !d->rates && row.cluster_keys[0].starts_with("deepep.")) {
    return fmt::format("algorithm \"{}\" ({}) reads the cluster's DeepEP constants, and {}",
                       row.name, row.library, d->missing);
  }
  if (row.data_file.empty()) {
    return {};
  }
  const LibraryFile* f = k.files.find(row.data_file);
  if (f == nullptr) {
    return fmt::format("algorithm \"{}\" needs its data file ep_libraries/{}.json, which this "
                       "experiment did not read",
                       row.name, row.data_file);
  }
  return f->rates ? std::string() : fmt::format("algorithm \"{}\": {}", row.name, f->missing);
}

}  // namespace

std::string missing_constants(EpAlgorithm a, const LibraryConstants& k) {
  const std::string missing = missing_constants_of(ep_algorithm_row(a), k);
  // The way out, where the user sets the algorithm: the row that reads no constants.
  return missing.empty() ? missing
                         : missing + fmt::format("; algorithm \"{}\" (NCCL's send and "
                                                 "receive) reads none",
                                                 ep_algorithm_row(EpAlgorithm::Flat).name);
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
    if (!row.data_file.empty()) {
      keys.push_back(fmt::format("configs/ep_libraries/{}.json", row.data_file));
    }
    out += fmt::format("{}{}: {}{}", out.empty() ? "" : "; ", row.name, row.how,
                       keys.empty() ? "" : ", reading " + name_list(keys, " and "));
  }
  return out;
}

}  // namespace hopsim::work
