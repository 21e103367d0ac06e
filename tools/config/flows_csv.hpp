// Reads a flow list from a CSV file (the `flows` workload's "flows_file"): one flow a row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/jobs/flows_job.hpp"

namespace hopsim::config {

/// The columns a flows CSV may have, in any order; the first line names them.
/// src, dst and bytes are required; id (default: the row's index from 0), start_us (default 0)
/// and after (ids separated by spaces) are optional, with the meanings of the JSON keys.
inline constexpr std::string_view kFlowsCsvColumns = "id, src, dst, bytes, start_us, after";

/// A flows file is read whole into memory: at most this many bytes (10^7 flows with ids).
inline constexpr std::uintmax_t kMaxFlowsFileBytes = std::uintmax_t{2} << 30;

/// The flows of CSV `text`; `name` (the file) starts every error: "NAME:LINE: what is wrong"
/// (a ConfigError). Strict: an unknown or repeated column, a row with another number of fields,
/// a value that is not a whole number in range (src, dst in [0, 2^24], bytes >= 0) or not a
/// finite number >= 0 (start_us), a quote, a repeated id or an "after" naming no flow.
/// Ranks beyond the cluster and cycles are FlowsJob::check's, as for JSON flows.
std::vector<work::ExplicitFlow> parse_flows_csv(std::string_view text, const std::string& name);

/// Reads `path` and parses it; a file that cannot be read is a ConfigError "PATH: why".
std::vector<work::ExplicitFlow> read_flows_csv(const std::string& path);

}  // namespace hopsim::config
