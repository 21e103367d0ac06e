// The keys of a kernel rules file (configs/profile/*.json: how `hopsim profile-check` classifies
// a profiler trace's kernels) and of each rule.
#pragma once

#include <array>
#include <string_view>

#include "tools/config/key.hpp"

namespace hopsim::config::keys::kernel_rules {

inline constexpr std::array<std::string_view, 1> kSchemaName{"hopsim.kernel_rules/1"};

inline constexpr ChoiceKey kSchema{.name = "schema",
                                   .choices = kSchemaName,
                                   .fallback = kRequired,
                                   .doc = "the format's name and version"};

inline constexpr StringKey kDescription{
    .name = "description",
    .fallback = "none",
    .doc = "what the rules cover and where their names come from"};

inline constexpr ValueKey kRules{.name = "rules",
                                 .type = "array of objects",
                                 .fallback = kRequired,
                                 .doc = "tried in order on each kernel's name"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kSchema, &kDescription, &kRules});
inline constexpr Section kSection{
    "kernel rules", "/",
    "how hopsim profile-check classifies a trace's kernels (configs/profile/*.json)", kKeys};

}  // namespace hopsim::config::keys::kernel_rules

namespace hopsim::config::keys::kernel_rule {

inline constexpr ValueKey kClass{
    .name = "class",
    .type = "string, or array of strings",
    .fallback = kRequired,
    .doc =
        "a kernel class (gemm_fprop, ..., other; docs/compute-model.md), \"nccl\", \"deepep\""
        " or \"unmodelled\"; several when the name cannot tell them apart (merged into one "
        "row)"};

inline constexpr StringKey kMatch{.name = "match",
                                  .fallback = kRequired,
                                  .doc = "an ECMAScript regular expression searched in the name"};

inline constexpr StringKey kNote{
    .name = "note", .fallback = "none", .doc = "why, and where such names were seen"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kClass, &kMatch, &kNote});
inline constexpr Section kSection{"kernel rules", "/rules/N",
                                  "one rule; the first that matches wins", kKeys};

}  // namespace hopsim::config::keys::kernel_rule
