// The keys of a regression suite's entry (DIR/suite.json, which `hopsim regress DIR` reads: an
// object of entries by name).
#pragma once

#include <array>
#include <string_view>

#include "tools/config/key.hpp"

namespace hopsim::config::keys::suite {

inline constexpr StringKey kExperiment{
    .name = "experiment",
    .non_empty = true,
    .fallback = kRequired,
    .doc = "the experiment file, relative to the suite's folder"};

inline constexpr ValueKey kSet{.name = "set",
                               .type = "array of strings",
                               .fallback = "none",
                               .doc = "KEY=VALUE overrides, each as --set reads it"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kExperiment, &kSet});
inline constexpr Section kSection{
    "suite", "/NAME",
    "an entry of a regression suite (DIR/suite.json for hopsim regress DIR); its expected "
    "report is DIR/NAME.json, so NAME is a file name",
    kKeys};

}  // namespace hopsim::config::keys::suite
