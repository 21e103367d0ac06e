// The collective ops and algorithms, in one table: each algorithm's name, the ops it
// implements and the tunables it takes. Parsing, checks, error messages and the reference read
// from here, so a new algorithm is one row (and its builder in collective_plan.cpp). The
// all-to-all algorithms are the EP exchanges' rows (ep_algorithms.hpp), appended to NCCL's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "workloads/collectives/ep_algorithms.hpp"
#include "workloads/compute/enum_names.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

enum class CollectiveOp : std::uint8_t { SendRecv, AllGather, ReduceScatter, AllReduce, AllToAll };
/// NCCL's algorithms (and the direct all-gather) by name. The all-to-all algorithms follow
/// them, one value per row of kEpAlgorithms: exchange_algorithm() and exchange_of() convert.
enum class CollectiveAlgorithm : std::uint8_t { Ring, Direct, Tree, Nvls, Auto };

/// One op: its name in configs and reports, and the phase its tasks report under.
struct OpRow {
  CollectiveOp op;
  std::string_view name;
  PhaseKind phase;
};

inline constexpr std::array<OpRow, 5> kCollectiveOps{{
    {CollectiveOp::SendRecv, "send_recv", PhaseKind::SendRecv},
    {CollectiveOp::AllGather, "all_gather", PhaseKind::AllGather},
    {CollectiveOp::ReduceScatter, "reduce_scatter", PhaseKind::ReduceScatter},
    {CollectiveOp::AllReduce, "all_reduce", PhaseKind::AllReduce},
    {CollectiveOp::AllToAll, "all_to_all", PhaseKind::AllToAll},
}};

/// A set of ops, one bit per CollectiveOp.
constexpr std::uint8_t op_bit(CollectiveOp op) {
  return static_cast<std::uint8_t>(1U << static_cast<unsigned>(op));
}

template <class... Op>
constexpr std::uint8_t ops(Op... op) {
  return static_cast<std::uint8_t>((op_bit(op) | ...));
}

/// One algorithm: its name, the ops it implements, which tunables it takes (chunks:
/// pipelined pieces; channels: parallel rings or trees; combine: the reverse exchange) and a
/// note for the reference.
struct AlgorithmRow {
  CollectiveAlgorithm algorithm;
  std::string_view name;
  std::uint8_t ops;
  bool chunks;
  bool channels;
  bool combine;
  std::string_view note = {};
};

inline constexpr std::array<AlgorithmRow, 5> kNcclAlgorithms{{
    {CollectiveAlgorithm::Ring, "ring",
     ops(CollectiveOp::SendRecv, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
         CollectiveOp::AllReduce),
     true, true, false},
    {CollectiveAlgorithm::Direct, "direct", ops(CollectiveOp::AllGather), false, false, false},
    {CollectiveAlgorithm::Tree, "tree", ops(CollectiveOp::AllReduce), true, true, false},
    {CollectiveAlgorithm::Nvls, "nvls", ops(CollectiveOp::AllReduce), false, false, false,
     "NVLink SHARP, one node"},
    {CollectiveAlgorithm::Auto, "auto",
     ops(CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce), true, true,
     false, "NCCL's tuner picks per size"},
}};

/// The all-to-all algorithm that runs EP exchange `a`, and the exchange an algorithm runs
/// (none for NCCL's).
constexpr CollectiveAlgorithm exchange_algorithm(EpAlgorithm a) {
  return static_cast<CollectiveAlgorithm>(kNcclAlgorithms.size() + static_cast<std::size_t>(a));
}

constexpr std::optional<EpAlgorithm> exchange_of(CollectiveAlgorithm a) {
  const auto i = static_cast<std::size_t>(a);
  if (i < kNcclAlgorithms.size()) {
    return std::nullopt;
  }
  return static_cast<EpAlgorithm>(i - kNcclAlgorithms.size());
}

/// NCCL's rows, then an all-to-all row per EP exchange: its name, chunks when it is chunked
/// (InfiniBand pieces), combine when it implements the reverse, its library as the note.
inline constexpr std::array<AlgorithmRow, kNcclAlgorithms.size() + kEpAlgorithms.size()>
    kCollectiveAlgorithms = [] {
      std::array<AlgorithmRow, kNcclAlgorithms.size() + kEpAlgorithms.size()> out{};
      for (std::size_t i = 0; i < kNcclAlgorithms.size(); ++i) {
        out[i] = kNcclAlgorithms[i];
      }
      for (const EpAlgorithmRow& x : kEpAlgorithms) {
        out[static_cast<std::size_t>(exchange_algorithm(x.algorithm))] =
            AlgorithmRow{exchange_algorithm(x.algorithm),
                         x.name,
                         ops(CollectiveOp::AllToAll),
                         x.chunked,
                         false,
                         implements(x, ExchangeOp::Combine),
                         x.library};
      }
      return out;
    }();

constexpr const AlgorithmRow& algorithm_row(CollectiveAlgorithm a) {
  return kCollectiveAlgorithms[static_cast<std::size_t>(a)];
}

constexpr std::string_view op_name(CollectiveOp op) {
  return kCollectiveOps[static_cast<std::size_t>(op)].name;
}

constexpr PhaseKind op_phase(CollectiveOp op) {
  return kCollectiveOps[static_cast<std::size_t>(op)].phase;
}

constexpr std::string_view algorithm_name(CollectiveAlgorithm a) {
  return algorithm_row(a).name;
}

constexpr bool implements(CollectiveOp op, CollectiveAlgorithm a) {
  return (algorithm_row(a).ops & op_bit(op)) != 0;
}

/// Every op and every algorithm, in table order (for parsers).
constexpr std::array<CollectiveOp, kCollectiveOps.size()> all_ops() {
  std::array<CollectiveOp, kCollectiveOps.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = kCollectiveOps[i].op;
  }
  return out;
}

constexpr std::array<CollectiveAlgorithm, kCollectiveAlgorithms.size()> all_algorithms() {
  std::array<CollectiveAlgorithm, kCollectiveAlgorithms.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = kCollectiveAlgorithms[i].algorithm;
  }
  return out;
}

/// The algorithms that implement `op`, quoted, in table order: "\"ring\", \"tree\" or \"auto\"".
std::string algorithms_of(CollectiveOp op);
/// Per op, the algorithms that implement it with their notes (the reference):
/// "send_recv: ring; ...; all_to_all: flat, two_tier (DeepEP normal) or low_latency (...)".
std::string algorithms_by_op();

// The tables are in enum order, so algorithm_row and op_name index them.
static_assert(in_enum_order(kCollectiveAlgorithms, &AlgorithmRow::algorithm));
static_assert(in_enum_order(kCollectiveOps, &OpRow::op));

}  // namespace hopsim::work
