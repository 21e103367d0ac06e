// The EP exchange algorithms in one table: how a MoE layer's dispatch and combine run, and the
// all-to-all algorithms of the collective kind (algorithms.hpp appends these rows to its own).
// A row is one algorithm: its name in configs and reports, the ops it implements, its builder
// (the flow DAG of one exchange), its flow bound (for the load checks), what its library's
// kernels reach on the cluster (the constants it reads) and the cluster keys they come from.
// The MoE layer (workloads/ep/), the collective kind (workloads/jobs/), the parsers, the checks
// and the reference read this table, so a new EP library is a row here and its constants: the
// cluster's (DeepEP's section) or a data file of its own, configs/ep_libraries/NAME.json, which
// prices it per GPU model (ep_library_rates.hpp) and which the experiment reads by the row's
// `data_file`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "workloads/collectives/collectives.hpp"
#include "workloads/collectives/ep_exchange.hpp"
#include "workloads/compute/enum_names.hpp"

namespace hopsim::work {

enum class EpAlgorithm : std::uint8_t {
  Flat,
  TwoTier,
  LowLatency,
  PplxKernels,
  NcclAllToAll,
  HybridEp,
  UcclEp,
  MegatronAllToAll,
  MegatronAllGather
};

/// One EP exchange algorithm. `library` names whose kernels it models (the reference's note;
/// empty: none), `how` says what moves, `chunked` whether it takes chunk_tokens and pieces
/// (InfiniBand pieces forwarded as they land). `build` adds one exchange with what `reach`
/// gives; `flows` bounds the flows one exchange starts, generously; `chunk_tokens` is the
/// library's tokens per piece by ranks and op (chunked rows; null otherwise).
struct EpAlgorithmRow {
  EpAlgorithm algorithm;
  std::string_view name;
  std::uint8_t ops;
  bool chunked;
  std::string_view library;
  std::string_view how;
  Handle (*build)(Collectives&, const Exchange&, const KernelReach&);
  double (*flows)(const ExchangeShape&);
  KernelReach (*reach)(const LibraryConstants&, ExchangeOp, std::int64_t comm_sms);
  std::int64_t (*chunk_tokens)(std::int64_t ranks, ExchangeOp op);
  /// The cluster keys it reads beyond the links ("" after the last): its latencies' and what
  /// `reach` reads.
  std::array<std::string_view, 7> cluster_keys;
  /// Its messages go through the NICs alone, even within a node (RDMA without NVLink
  /// forwarding): a perturbed NIC or spine link touches its exchanges inside a node too.
  bool through_nics = false;
  /// The data file that prices it (configs/ep_libraries/<data_file>.json, its floor and rates
  /// per GPU model); empty: its constants are the cluster's.
  std::string_view data_file = {};
  /// Megatron's alltoall dispatcher: each GPU permutes its (token, expert) copies into
  /// destination order before dispatch and unpermutes (weighted by the router's probabilities)
  /// after combine, memory-bound kernels the MoE layer prices with its compute model.
  bool permutes_locally = false;
  /// Megatron's allgather dispatcher: every rank's tokens go to every rank of the group
  /// (all-gather; combine a reduce-scatter), whatever the routing matrix says.
  bool gathers_all = false;
};

/// What Megatron's dispatchers move beside the tokens, in bytes (token_dispatcher.py): the
/// router's probabilities at its default moe_router_dtype (none: the activations' BF16), 2 per
/// (token, expert); its token counts per expert as int64, 8; its routing map as bool, 1.
inline constexpr std::int64_t kMegatronProbBytes = 2;
inline constexpr std::int64_t kMegatronCountBytes = 8;
inline constexpr std::int64_t kMegatronMapBytes = 1;

// The rows' columns (ep_algorithms.cpp): builders, flow bounds, what the kernels reach.
Handle flat_exchange(Collectives& c, const Exchange& x, const KernelReach& reach);
Handle two_tier_exchange(Collectives& c, const Exchange& x, const KernelReach& reach);
Handle low_latency_exchange(Collectives& c, const Exchange& x, const KernelReach& reach);
Handle paced_exchange(Collectives& c, const Exchange& x, const KernelReach& reach);
Handle relayed_exchange(Collectives& c, const Exchange& x, const KernelReach& reach);
Handle megatron_alltoall_exchange(Collectives& c, const Exchange& x, const KernelReach& reach);
Handle megatron_allgather_exchange(Collectives& c, const Exchange& x, const KernelReach& reach);
double pair_flows(const ExchangeShape& s);
double two_tier_flows(const ExchangeShape& s);
double megatron_alltoall_flows(const ExchangeShape& s);
double megatron_allgather_flows(const ExchangeShape& s);
KernelReach links_only(const LibraryConstants& k, ExchangeOp op, std::int64_t comm_sms);
KernelReach deepep_normal(const LibraryConstants& k, ExchangeOp op, std::int64_t comm_sms);
KernelReach deepep_low_latency(const LibraryConstants& k, ExchangeOp op, std::int64_t comm_sms);
KernelReach pplx_kernels_rates(const LibraryConstants& k, ExchangeOp op, std::int64_t comm_sms);
KernelReach nccl_all_to_all_rates(const LibraryConstants& k, ExchangeOp op, std::int64_t comm_sms);
KernelReach hybrid_ep_rates(const LibraryConstants& k, ExchangeOp op, std::int64_t comm_sms);
KernelReach uccl_ep_rates(const LibraryConstants& k, ExchangeOp op, std::int64_t comm_sms);
std::int64_t deepep_normal_chunk_tokens(std::int64_t ranks, ExchangeOp op);

inline constexpr std::array<EpAlgorithmRow, 9> kEpAlgorithms{{
    {EpAlgorithm::Flat,
     "flat",
     kBothOps,
     false,
     "",
     "every pair at once",
     flat_exchange,
     pair_flows,
     links_only,
     nullptr,
     {"nccl.ring.simple"}},
    {EpAlgorithm::TwoTier,
     "two_tier",
     kBothOps,
     true,
     "DeepEP normal",
     "DeepEP's normal kernels (InfiniBand once per node, then NVLink; within one node its "
     "intranode kernels)",
     two_tier_exchange,
     two_tier_flows,
     deepep_normal,
     deepep_normal_chunk_tokens,
     {"deepep.nvlink_efficiency", "deepep.sms", "deepep.sm_exponent",
      "deepep.intranode_GBps_per_sm", "deepep.intranode_link_share", "deepep.layout_us",
      "deepep.notify_us"}},
    {EpAlgorithm::LowLatency,
     "low_latency",
     kBothOps,
     false,
     "DeepEP low-latency",
     "DeepEP's low-latency kernels (a message per selection)",
     low_latency_exchange,
     pair_flows,
     deepep_low_latency,
     nullptr,
     {"deepep.ll_dispatch_us", "deepep.ll_combine_us"},
     true},
    {EpAlgorithm::PplxKernels,
     "pplx_kernels",
     kBothOps,
     false,
     "pplx-kernels",
     "pplx-kernels (a message per selection, NVLink within a node and IBGDA across, at its "
     "floor and rates)",
     paced_exchange,
     pair_flows,
     pplx_kernels_rates,
     nullptr,
     {},
     false,
     "pplx_kernels"},
    {EpAlgorithm::NcclAllToAll,
     "nccl_all_to_all",
     kBothOps,
     false,
     "NCCL all-to-all",
     "NCCL's all-to-all as torch.distributed runs it (every pair at once, at its floor and "
     "rates)",
     paced_exchange,
     pair_flows,
     nccl_all_to_all_rates,
     nullptr,
     {},
     false,
     "nccl_all_to_all"},
    {EpAlgorithm::HybridEp,
     "hybrid_ep",
     kBothOps,
     false,
     "HybridEP",
     "NVIDIA's Hybrid-EP kernels (RDMA once per node to the same-rail GPU, TMA copies over "
     "NVLink; no host-side wait, at its floor and rates)",
     relayed_exchange,
     pair_flows,
     hybrid_ep_rates,
     nullptr,
     {},
     false,
     "hybrid_ep"},
    {EpAlgorithm::UcclEp,
     "uccl_ep",
     kBothOps,
     false,
     "UCCL-EP",
     "UCCL-EP's normal kernels (DeepEP's interface; RDMA through a CPU proxy once per node, "
     "then NVLink, at its floor and rates)",
     relayed_exchange,
     pair_flows,
     uccl_ep_rates,
     nullptr,
     {},
     false,
     "uccl_ep"},
    {EpAlgorithm::MegatronAllToAll,
     "megatron_alltoall",
     kBothOps,
     false,
     "Megatron-Core alltoall dispatcher",
     "Megatron-Core's MoEAlltoAllTokenDispatcher (permute per (token, expert) copy, the "
     "token counts all-gathered, NCCL's all-to-all-v of the tokens and of their "
     "probabilities at nccl_all_to_all's floor and rates; combine the reverse, then unpermute)",
     megatron_alltoall_exchange,
     megatron_alltoall_flows,
     nccl_all_to_all_rates,
     nullptr,
     {"nccl.ring.ll"},
     false,
     "nccl_all_to_all",
     true},
    {EpAlgorithm::MegatronAllGather,
     "megatron_allgather",
     kBothOps,
     false,
     "Megatron-Core allgather dispatcher",
     "Megatron-Core's MoEAllGatherTokenDispatcher (every rank's tokens, routing map and "
     "probabilities all-gathered over the group by NCCL's rings, the local experts' rows "
     "picked out; combine a reduce-scatter)",
     megatron_allgather_exchange,
     megatron_allgather_flows,
     links_only,
     nullptr,
     {"nccl.ring.simple"},
     false,
     {},
     false,
     true},
}};

constexpr const EpAlgorithmRow& ep_algorithm_row(EpAlgorithm a) {
  return kEpAlgorithms[static_cast<std::size_t>(a)];
}

constexpr std::string_view ep_algorithm_name(EpAlgorithm a) {
  return ep_algorithm_row(a).name;
}

constexpr bool implements(const EpAlgorithmRow& row, ExchangeOp op) {
  return (row.ops & exchange_op_bit(op)) != 0;
}

/// Every row's name, in table order (for parsers).
constexpr std::array<std::string_view, kEpAlgorithms.size()> ep_algorithm_names() {
  std::array<std::string_view, kEpAlgorithms.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = kEpAlgorithms[i].name;
  }
  return out;
}

/// One exchange of algorithm `a`: its builder, with what its kernels reach.
Handle add_exchange(Collectives& c, EpAlgorithm a, const Exchange& x);
/// Tokens per InfiniBand piece when a config names none: the library's for `ranks` and `op`
/// (0: not a chunked algorithm).
std::int64_t default_chunk_tokens(EpAlgorithm a, std::int64_t ranks, ExchangeOp op);

/// The names of the rows `keep` keeps (every row: null), in table order, "a, b or c", each in
/// double quotes with `quoted`.
std::string ep_algorithm_list(bool (*keep)(const EpAlgorithmRow&), bool quoted);

constexpr bool is_chunked(const EpAlgorithmRow& row) {
  return row.chunked;
}

constexpr bool has_combine(const EpAlgorithmRow& row) {
  return implements(row, ExchangeOp::Combine);
}

/// Why algorithm `a` cannot run with the constants `k` (its data file was not found, or names
/// no costs for the cluster's GPU); empty: it can.
std::string missing_constants(EpAlgorithm a, const LibraryConstants& k);

/// For the reference: each row's name, what moves and the cluster keys it reads, "flat: every
/// pair at once, reading nccl.ring.simple; two_tier: ...".
std::string ep_algorithms_described();

// The table is in enum order, so ep_algorithm_row indexes it.
static_assert(in_enum_order(kEpAlgorithms, &EpAlgorithmRow::algorithm));

}  // namespace hopsim::work
