// Chrome trace-event JSON of a run (opens in Perfetto or chrome://tracing).
#pragma once

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "workloads/experiment/run.hpp"

namespace hopsim::tools {

/// A process per GPU named like "n0.g3", a thread per stream of the plan. Compute tasks are
/// complete ("X") slices on their stream (held communication too, a folded step's gradient
/// buckets on the "dp" stream, category "comm"); flows overlap freely, so each is an async slice
/// ("b"/"e") on its sender's comm stream, named by its label, with the destination, bytes and
/// links as arguments. Cases (sizes of a collective) follow one another on the timeline, each
/// marked by an instant event. The first `links_drawn` watched links (the busiest) get counter
/// tracks of their load in GB/s. Each probe a folded step measured is a process of its own,
/// "probe: NAME", drawn from time 0, a thread per GPU and stream ("n0.g3 compute").
/// Times in microseconds, as the format wants.
/// Only the tasks of GPUs in `ranks` (every GPU when it is empty) are drawn.
nlohmann::json make_trace(const work::RunResult& result, std::size_t links_drawn,
                          const std::set<topo::GpuId>& ranks = {});

/// The GPUs of "0-7,64" (ranges and single ranks, each below `gpus`); throws
/// config::ConfigError naming --trace-ranks on anything else.
std::set<topo::GpuId> parse_trace_ranks(const std::string& text, int gpus);

}  // namespace hopsim::tools
