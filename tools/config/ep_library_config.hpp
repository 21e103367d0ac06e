// Reads the EP libraries' data files (configs/ep_libraries/NAME.json): each library's fixed
// time per call and rates per link kind, per GPU model, for the cluster's GPU.
#pragma once

#include <string>

#include "tools/config/node.hpp"
#include "workloads/collectives/ep_library_rates.hpp"

namespace hopsim::config {

/// One data file, every GPU's costs checked: the library `name` with the costs of GPU model
/// `gpu`, or, where the file names none for it, why. Throws ConfigError naming the file and
/// the JSON pointer of the first bad or missing value.
work::LibraryFile parse_ep_library(const Node& root, const std::string& name,
                                   const std::string& gpu);

/// The library of every EP table row that names a data file (EpAlgorithmRow::data_file), read
/// from ep_libraries/<data_file>.json under the first preset root that has it (presets.hpp),
/// for GPU model `gpu`. A library whose file is found nowhere, does not parse or lacks a key
/// has no rates and says why; the checks report it only when a workload picks its row, so a
/// broken data file stops no run that does not use it.
work::LibraryFiles read_ep_libraries(const std::string& gpu);

}  // namespace hopsim::config
