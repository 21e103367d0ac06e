// What an EP library that a data file prices costs in a collective's exchange, as `hopsim
// explain` prints it: the op's floor and rates on the exchange's path, and where the file
// states what the library's SMs move, the rate they bound the exchange at from 2 to 32 SMs and
// at the job's comm_sms (ep_library_rates.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include "workloads/experiment/experiment.hpp"

namespace hopsim::tools {

/// Null unless the job is an all-to-all whose algorithm a data file prices (with costs for the
/// cluster's GPU).
nlohmann::ordered_json exchange_costs(const work::Experiment& exp, const work::CollectiveJob& job);

}  // namespace hopsim::tools
