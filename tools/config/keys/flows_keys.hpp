// The keys of a `flows` workload and of each of its flows.
#pragma once

#include <array>
#include <cstdint>

#include "tools/config/key.hpp"
#include "workloads/jobs/flows_job.hpp"

namespace hopsim::config::keys::flows {

inline constexpr std::array kKindName{work::FlowsJob::kKind};

inline constexpr ChoiceKey kKind{.name = "kind",
                                 .choices = kKindName,
                                 .fallback = kRequired,
                                 .doc = "explicit flows between GPUs"};

inline constexpr ValueKey kFlows{.name = "flows",
                                 .type = "array of objects",
                                 .fallback = "required without flows_file",
                                 .doc = "at least one flow"};

inline constexpr StringKey kFlowsFile{
    .name = "flows_file",
    .fallback = "none",
    .doc = "instead of flows: a CSV file of them, relative to this file; its first line names "
           "the columns (src, dst, bytes; optionally id, start_us, after: ids separated by "
           "spaces), then one flow a line (docs/experiments.md, Big flow lists)"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kKind, &kFlows, &kFlowsFile});
inline constexpr Section kSection{"experiment", "/workload (kind flows)", "explicit flows", kKeys};

}  // namespace hopsim::config::keys::flows

namespace hopsim::config::keys::flow {

inline constexpr std::int64_t kMaxRank = std::int64_t{1} << 24;

inline constexpr StringKey kId{.name = "id",
                               .fallback = "its index",
                               .doc = "names the flow in reports, traces and \"after\""};

inline constexpr IntegerKey kSrc{.name = "src",
                                 .lo = 0,
                                 .hi = kMaxRank,
                                 .fallback = kRequired,
                                 .doc = "sending GPU (global rank)"};

inline constexpr IntegerKey kDst{
    .name = "dst", .lo = 0, .hi = kMaxRank, .fallback = kRequired, .doc = "receiving GPU; not src"};

inline constexpr IntegerKey kBytes{.name = "bytes",
                                   .lo = 0,
                                   .hi = INT64_MAX,
                                   .unit = Unit::Bytes,
                                   .fallback = kRequired,
                                   .doc = "bytes to move"};

inline constexpr NumberKey kStartUs{.name = "start_us",
                                    .sign = Sign::NonNegative,
                                    .unit = Unit::Microseconds,
                                    .value = 0,
                                    .doc = "earliest start"};

inline constexpr ValueKey kAfter{.name = "after",
                                 .type = "array of ids",
                                 .fallback = "[]",
                                 .doc = "flows that must finish first"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kId, &kSrc, &kDst, &kBytes, &kStartUs, &kAfter});
inline constexpr Section kSection{"experiment", "/workload/flows/N", "one flow", kKeys};

}  // namespace hopsim::config::keys::flow
