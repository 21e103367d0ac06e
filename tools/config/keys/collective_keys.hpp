// The keys of a `collective` workload, its size range and its MoE routing, and the expert
// popularity keys that routing shares with the MoE layers'.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tools/config/key.hpp"
#include "workloads/collectives/algorithms.hpp"
#include "workloads/collectives/collectives.hpp"
#include "workloads/jobs/collective_job.hpp"

namespace hopsim::config::keys::popularity {

/// In work::RoutingDistribution's order.
inline constexpr std::array<std::string_view, 5> kDistributionNames{"uniform", "zipf", "dirichlet",
                                                                    "counts", "training"};

inline constexpr ChoiceKey kDistribution{
    .name = "distribution",
    .choices = kDistributionNames,
    .value = "uniform",
    .doc =
        "expert popularity: all alike; Zipf's law over a seeded ranking of the experts; "
        "weights drawn from a symmetric Dirichlet (seeded); a router's per-expert counts; or "
        "training: each batch's popularity from the runs of alike tokens it holds "
        "(docs/expert-parallelism.md#training-routing)"};

inline constexpr NumberKey kZipfS{.name = "zipf_s",
                                  .lo = 0,
                                  .hi = 8,
                                  .value = 1,
                                  .doc = "zipf: the r-th most popular expert weighs 1 / r^s"};

inline constexpr NumberKey kAlpha{
    .name = "alpha",
    .lo = 0.001,
    .hi = 1000,
    .value = 1,
    .doc = "dirichlet: the concentration; below 1 a few experts take most tokens, large is even"};

inline constexpr ValueKey kCounts{
    .name = "counts",
    .type = "array of numbers >= 0, or a file name",
    .fallback = "required with counts",
    .doc =
        "counts: one number per routed expert (a router's histogram), in proportion to which "
        "experts are chosen; a string names a JSON file beside the config holding the array"};

inline constexpr NumberKey kRunTokens{
    .name = "run_tokens",
    .lo = 1,
    .hi = 1e9,
    .value = work::kTrainingRunTokens,
    .doc =
        "training: lambda, tokens of a sequence that choose experts alike (a run ends with its "
        "sequence); a batch of T tokens routes as T / min(lambda, seq_len) independent choices; "
        "the default is fitted on a published forced-balance/dropless pair (Qwen3-235B, 16K)"};

}  // namespace hopsim::config::keys::popularity

namespace hopsim::config::keys::collective {

inline constexpr std::array kKindName{work::CollectiveJob::kKind};
/// The ops and algorithms as their table names them (workloads/collectives/algorithms.hpp).
inline constexpr auto kOpNames = names_of<&work::OpRow::name>(work::kCollectiveOps);
inline constexpr auto kAlgorithmNames =
    names_of<&work::AlgorithmRow::name>(work::kCollectiveAlgorithms);
/// The mesh dimensions, in work::Dim's order.
inline constexpr std::array<std::string_view, 5> kGroupNames{"tp", "cp", "pp", "dp", "ep"};
/// work::kProtocols' names, then "auto" (NCCL's tuner).
inline constexpr std::array<std::string_view, 4> kProtocolNames{"simple", "ll", "ll128", "auto"};
inline constexpr std::int64_t kMaxRank = std::int64_t{1} << 24;
inline constexpr std::int64_t kMaxSize = INT64_MAX / 4;

inline constexpr ChoiceKey kKind{.name = "kind",
                                 .choices = kKindName,
                                 .fallback = kRequired,
                                 .doc = "one collective, nccl-tests style"};

inline constexpr ChoiceKey kOp{
    .name = "op", .choices = kOpNames, .fallback = kRequired, .doc = "the collective"};

inline constexpr ChoiceKey kAlgorithm{.name = "algorithm",
                                      .choices = kAlgorithmNames,
                                      .fallback = "\"flat\" for all_to_all, else \"ring\"",
                                      .table_doc = work::algorithms_by_op};

inline constexpr IntegerKey kRanks{
    .name = "ranks",
    .lo = 0,
    .hi = kMaxRank,
    .shape = Shape::List,
    .fallback = "every GPU",
    .doc = "GPUs in ring order, at least 2, distinct; send_recv takes exactly 2"};

inline constexpr ChoiceKey kGroup{
    .name = "group",
    .choices = kGroupNames,
    .fallback = "none",
    .doc = "instead of ranks: run in every group of this mesh dimension at once"};

// One size, an array of sizes, or a size range (keys::size_range); each size read as this.
inline constexpr IntegerKey kBytes{.name = "bytes",
                                   .lo = 1,
                                   .hi = kMaxSize,
                                   .also = "an array of them, or {min, max, factor}",
                                   .unit = Unit::Bytes,
                                   .fallback = "required unless moe",
                                   .doc = "per rank (all_gather: output), one case per size"};

inline constexpr IntegerKey kChunks{
    .name = "chunks",
    .lo = 1,
    .hi = 1024,
    .fallback = "ring 1, tree pieces of 512 KiB (at most 32), two_tier 1",
    .doc =
        "pipelined pieces: per ring step, per tree, per InfiniBand transfer (two_tier without "
        "moe)"};

inline constexpr IntegerKey kChannels{
    .name = "channels",
    .lo = 1,
    .hi = 64,
    .fallback = "one per GPU of a node across nodes, else 1",
    .doc = "ring, tree: rings (trees) in parallel, rail-aligned, each with its share of the data"};

inline constexpr ChoiceKey kProtocol{
    .name = "protocol",
    .choices = kProtocolNames,
    .fallback = "the cluster's nccl.protocol",
    .doc =
        "NCCL protocol: its latencies and its payload share of the wire bytes; auto: NCCL's "
        "tuner picks per size"};

inline constexpr BooleanKey kCombine{
    .name = "combine",
    .value = false,
    .doc = "all_to_all: the reverse exchange (DeepEP's combine; flat sends each pair's bytes "
           "back)"};

inline constexpr IntegerKey kChunkTokens{
    .name = "chunk_tokens",
    .lo = 0,
    .hi = std::int64_t{1} << 20,
    .fallback = "DeepEP's for the EP size",
    .doc = "two_tier with moe: tokens per InfiniBand piece, forwarded as it lands; 0: one piece"};

inline constexpr ChoiceKey kPieces{
    .name = "pieces",
    .choices = work::kPieceNames,
    .fallback = "\"each\"",
    .doc =
        "two_tier: every piece its own flows (DeepEP's kernels), or streamed: per node pair "
        "the first piece, the rest, and the last piece's second stage (16 flows, not 8 per "
        "piece)"};

inline constexpr IntegerKey kCommSms{
    .name = "comm_sms",
    .lo = 0,
    .hi = std::int64_t{1} << 20,
    .value = 0,
    .doc = "all_to_all: SMs the EP library's kernels hold (DeepEP's rate follows them); 0: the "
           "library's own count"};

inline constexpr ValueKey kMoe{
    .name = "moe",
    .type = "object",
    .fallback = "none",
    .doc = "all_to_all only: route MoE tokens instead of a uniform matrix"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kKind, &kOp, &kAlgorithm, &kRanks, &kGroup, &kBytes, &kChunks,
                           &kChannels, &kProtocol, &kCombine, &kChunkTokens, &kPieces, &kCommSms,
                           &kMoe});
inline constexpr Section kSection{"experiment", "/workload (kind collective)",
                                  "one collective over one or several sizes", kKeys};

}  // namespace hopsim::config::keys::collective

namespace hopsim::config::keys::size_range {

inline constexpr IntegerKey kMin{.name = "min",
                                 .lo = 1,
                                 .hi = collective::kMaxSize,
                                 .unit = Unit::Bytes,
                                 .fallback = kRequired,
                                 .doc = "smallest size"};

inline constexpr IntegerKey kMax{.name = "max",
                                 .lo = 1,
                                 .hi = collective::kMaxSize,
                                 .lo_key = "min",
                                 .unit = Unit::Bytes,
                                 .fallback = kRequired,
                                 .doc = "largest size"};

inline constexpr IntegerKey kFactor{.name = "factor",
                                    .lo = 2,
                                    .hi = 1024,
                                    .fallback = kRequired,
                                    .doc = "each size is the previous times this"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kMin, &kMax, &kFactor});
inline constexpr Section kSection{"experiment", "/workload/bytes (an object)",
                                  "sizes min, min x factor, ... up to max (nccl-tests -b -e -f)",
                                  kKeys};

}  // namespace hopsim::config::keys::size_range

namespace hopsim::config::keys::collective_moe {

inline constexpr std::int64_t kMaxCount = std::int64_t{1} << 20;

inline constexpr IntegerKey kTokensPerGpu{.name = "tokens_per_gpu",
                                          .lo = 1,
                                          .hi = kMaxCount,
                                          .fallback = kRequired,
                                          .doc = "tokens each GPU routes"};

inline constexpr IntegerKey kExperts{.name = "experts",
                                     .lo = 1,
                                     .hi = kMaxCount,
                                     .fallback = kRequired,
                                     .doc = "routed experts, spread evenly over the ranks"};

inline constexpr IntegerKey kTopK{.name = "top_k",
                                  .lo = 1,
                                  .hi = kMaxCount,
                                  .fallback = kRequired,
                                  .doc = "distinct experts per token"};

inline constexpr IntegerKey kMaxNodesPerToken{.name = "max_nodes_per_token",
                                              .lo = 0,
                                              .hi = kMaxCount,
                                              .value = 4,
                                              .doc = "nodes a token may reach; 0: no limit"};

inline constexpr IntegerKey kHidden{.name = "hidden",
                                    .lo = 1,
                                    .hi = std::int64_t{1} << 24,
                                    .fallback = kRequired,
                                    .doc = "elements of a token's hidden state"};

inline constexpr NumberKey kBytesPerElement{
    .name = "bytes_per_element",
    .sign = Sign::Positive,
    .hi = 64,
    .value = 2,
    .doc = "bytes per element on the wire (FP8 with scales: 1.03125)"};

inline constexpr IntegerKey kSeed{.name = "seed",
                                  .lo = 0,
                                  .hi = INT64_MAX,
                                  .fallback = "the experiment's seed",
                                  .doc = "seeds the routing draw"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kTokensPerGpu, &kExperts, &kTopK, &kMaxNodesPerToken, &kHidden, &kBytesPerElement, &kSeed,
     &popularity::kDistribution, &popularity::kZipfS, &popularity::kAlpha, &popularity::kCounts,
     &popularity::kRunTokens});
inline constexpr Section kSection{"experiment", "/workload/moe", "MoE token routing for all_to_all",
                                  kKeys};

}  // namespace hopsim::config::keys::collective_moe
