// The collective ops and algorithms, in one table: each algorithm's name, the ops it
// implements and the tunables it takes. Parsing, checks, error messages and the reference read
// from here, so a new algorithm is one row (and its builder in collective_plan.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "workloads/plan/plan.hpp"

namespace hopsim::work {

enum class CollectiveOp : std::uint8_t { SendRecv, AllGather, ReduceScatter, AllReduce, AllToAll };
enum class CollectiveAlgorithm : std::uint8_t {
  Ring,
  Direct,
  Flat,
  TwoTier,
  Tree,
  Nvls,
  LowLatency,
  Auto
};

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

inline constexpr std::array<AlgorithmRow, 8> kCollectiveAlgorithms{{
    {CollectiveAlgorithm::Ring, "ring",
     ops(CollectiveOp::SendRecv, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
         CollectiveOp::AllReduce),
     true, true, false},
    {CollectiveAlgorithm::Direct, "direct", ops(CollectiveOp::AllGather), false, false, false},
    {CollectiveAlgorithm::Flat, "flat", ops(CollectiveOp::AllToAll), false, false, false},
    {CollectiveAlgorithm::TwoTier, "two_tier", ops(CollectiveOp::AllToAll), true, false, true,
     "DeepEP normal"},
    {CollectiveAlgorithm::Tree, "tree", ops(CollectiveOp::AllReduce), true, true, false},
    {CollectiveAlgorithm::Nvls, "nvls", ops(CollectiveOp::AllReduce), false, false, false,
     "NVLink SHARP, one node"},
    {CollectiveAlgorithm::LowLatency, "low_latency", ops(CollectiveOp::AllToAll), false, false,
     true, "DeepEP low-latency"},
    {CollectiveAlgorithm::Auto, "auto",
     ops(CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce), true,
     true, false, "NCCL's tuner picks per size"},
}};

constexpr const AlgorithmRow& algorithm_row(CollectiveAlgorithm a) {
  return kCollectiveAlgorithms[static_cast<std::size_t>(a)];
}
constexpr std::string_view op_name(CollectiveOp op) {
  return kCollectiveOps[static_cast<std::size_t>(op)].name;
}
constexpr PhaseKind op_phase(CollectiveOp op) {
  return kCollectiveOps[static_cast<std::size_t>(op)].phase;
}
constexpr std::string_view algorithm_name(CollectiveAlgorithm a) { return algorithm_row(a).name; }
constexpr bool implements(CollectiveOp op, CollectiveAlgorithm a) {
  return (algorithm_row(a).ops & op_bit(op)) != 0;
}

/// The algorithms that implement `op`, quoted, in table order: "\"ring\", \"tree\" or \"auto\"".
std::string algorithms_of(CollectiveOp op);
/// Per op, the algorithms that implement it with their notes (the reference):
/// "send_recv: ring; ...; all_to_all: flat, two_tier (DeepEP normal) or low_latency (...)".
std::string algorithms_by_op();

// The table is in enum order, so algorithm_row and op_name index it.
static_assert([] {
  for (std::size_t i = 0; i < kCollectiveAlgorithms.size(); ++i) {
    if (static_cast<std::size_t>(kCollectiveAlgorithms[i].algorithm) != i) {
      return false;
    }
  }
  for (std::size_t i = 0; i < kCollectiveOps.size(); ++i) {
    if (static_cast<std::size_t>(kCollectiveOps[i].op) != i) {
      return false;
    }
  }
  return true;
}());

}  // namespace hopsim::work
