// The keys of a `chakra` workload (a Chakra execution trace replayed) and of its per-op
// collective algorithms.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tools/config/key.hpp"
#include "workloads/collectives/algorithms.hpp"
#include "workloads/trace/chakra_job.hpp"

namespace hopsim::config::keys::chakra {

inline constexpr std::array kKindName{work::ChakraJob::kKind};
inline constexpr std::int64_t kMaxRank = std::int64_t{1} << 20;

inline constexpr ChoiceKey kKind{.name = "kind",
                                 .choices = kKindName,
                                 .fallback = kRequired,
                                 .doc = "replays a Chakra execution trace"};

inline constexpr StringKey kTrace{
    .name = "trace",
    .fallback = kRequired,
    .doc =
        "the trace's files, relative to this file: a prefix (DIR/NAME for DIR/NAME.0.et, "
        "DIR/NAME.1.et, ...), one of its files, or a folder holding one such family"};

inline constexpr IntegerKey kGpus{.name = "gpus",
                                  .lo = 0,
                                  .hi = kMaxRank,
                                  .shape = Shape::List,
                                  .fallback = "rank r on GPU r",
                                  .doc = "the GPU of each trace rank, in rank order"};

inline constexpr ValueKey kGroups{
    .name = "groups",
    .type = "object of arrays of integers",
    .fallback = "{}",
    .doc =
        "the trace ranks of each process group a collective names (its pg_name), in ring "
        "order; a collective without pg_name runs over every rank"};

inline constexpr ChoiceKey kCompute{
    .name = "compute",
    .choices = work::kTraceComputeNames,
    .value = "recorded",
    .doc =
        "a kernel's time: its duration_micros, or the GPU's roofline from its num_ops (FLOPs)"
        " and tensor_size (bytes)"};

inline constexpr ValueKey kAlgorithms{.name = "algorithms",
                                      .type = "object",
                                      .fallback = "NCCL's tuner; all_to_all flat",
                                      .doc = "the algorithm of each collective op (keys below)"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kKind, &kTrace, &kGpus, &kGroups, &kCompute, &kAlgorithms});
inline constexpr Section kSection{
    "experiment", "/workload (kind chakra)",
    "a Chakra execution trace replayed (one file per rank; docs/traces.md)", kKeys};

}  // namespace hopsim::config::keys::chakra

namespace hopsim::config::keys::chakra_algorithms {

/// The algorithms that implement `Op`, in their table's order (algorithms.hpp).
template <work::CollectiveOp Op>
inline constexpr auto kAlgorithmsOf = [] {
  constexpr std::size_t kCount = [] {
    std::size_t n = 0;
    for (const work::AlgorithmRow& row : work::kCollectiveAlgorithms) {
      n += work::implements(Op, row.algorithm) ? 1U : 0U;
    }
    return n;
  }();
  std::array<std::string_view, kCount> names{};
  std::size_t i = 0;
  for (const work::AlgorithmRow& row : work::kCollectiveAlgorithms) {
    if (work::implements(Op, row.algorithm)) {
      names[i++] = row.name;
    }
  }
  return names;
}();

// Each key is an op's name; absent, the op runs with work::ChakraJob::algorithm_for's choice.
inline constexpr ChoiceKey kAllReduce{.name = work::op_name(work::CollectiveOp::AllReduce),
                                      .choices = kAlgorithmsOf<work::CollectiveOp::AllReduce>,
                                      .fallback = "\"auto\"",
                                      .doc = "all-reduce and barrier"};

inline constexpr ChoiceKey kAllGather{.name = work::op_name(work::CollectiveOp::AllGather),
                                      .choices = kAlgorithmsOf<work::CollectiveOp::AllGather>,
                                      .fallback = "\"auto\"",
                                      .doc = "all-gather"};

inline constexpr ChoiceKey kReduceScatter{
    .name = work::op_name(work::CollectiveOp::ReduceScatter),
    .choices = kAlgorithmsOf<work::CollectiveOp::ReduceScatter>,
    .fallback = "\"auto\"",
    .doc = "reduce-scatter"};

inline constexpr ChoiceKey kAllToAll{
    .name = work::op_name(work::CollectiveOp::AllToAll),
    .choices = kAlgorithmsOf<work::CollectiveOp::AllToAll>,
    .fallback = "\"flat\"",
    .doc = "all-to-all (NCCL runs it flat: one send/recv per pair)"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kAllReduce, &kAllGather, &kReduceScatter, &kAllToAll});
inline constexpr Section kSection{"experiment", "/workload/algorithms (kind chakra)",
                                  "the algorithm each collective op of the trace runs with", kKeys};

}  // namespace hopsim::config::keys::chakra_algorithms
