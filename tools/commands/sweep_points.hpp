// The points of a sweep, beside sweep_points(): the numbers its grammar reads (--vary ranges,
// --shard, a CSV's point column) and the shard of them one run takes.
#pragma once

#include <cstddef>
#include <string>

namespace hopsim::tools::sweep {

/// `s` whole as a finite number into `out`; false when it is not one (or is empty).
bool parse_number(const std::string& s, double& out);

/// The points one run of a sweep takes: those whose index is `index` modulo `count`.
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
};

/// --shard I/N as the shard of index I-1 of N; every point when `shard` is empty. Throws
/// config::ConfigError unless I and N are integers with 1 <= I <= N <= 1e6.
Shard parse_shard(const std::string& shard);

}  // namespace hopsim::tools::sweep
