// What an EP library that a data file prices (configs/ep_libraries/NAME.json) reaches on one
// GPU model: per path (every rank on one node, or across nodes) and per op, its fixed time per
// call and the rate each GPU's bytes leave at on each kind of link.
//
// One exchange of such a library, on a non-blocking fabric where one link kind binds:
//   time = floor + bytes / rate
// with `bytes` what the busiest GPU sends over that kind of link and `rate` the library's
// (capped at the link's own): the per-call floor covers its launch, layout and signalling.
// Through the NICs a GPU's messages reach at most `nic_pair` per destination rank, so its rate
// grows with the remote ranks it sends to until the NIC rate saturates it:
//   rate = min(nic, remote ranks x nic_pair)
// Where the file says what the library's SMs move (sm_rate), each GPU's SMs also handle every
// (token, destination node) pair it sends, its own node included, at sm_pair per pair and its
// bytes at sm_rate, shared by the S SMs the kernels hold; the exchange lasts at least that,
// from its start (the floor runs on the same SMs):
//   time >= (pairs x sm_pair + bytes / sm_rate) / S
// so its rate grows with S until the links bind, then stays (saturation).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/units.hpp"

namespace hopsim::work {

/// One op on one path: the fixed time per call before the messages leave, and the rates the
/// library's messages reach per GPU and direction over NVLink and over the NICs (at most
/// `nic_pair` per remote rank: the NIC rate is min(nic, remote ranks x nic_pair)).
struct PathCost {
  Time floor{};
  Bandwidth nvlink{};
  Bandwidth nic{};
  Bandwidth nic_pair{};
  /// What one SM of the library's kernels spends per (token, destination node) pair beyond
  /// its bytes, and the bytes it moves per second (0: the SMs bind nothing).
  Time sm_pair{};
  Bandwidth sm_rate{};

  /// The NIC rate a GPU reaches sending to `remote` ranks on other nodes (nic_pair 0: nic).
  Bandwidth nic_rate(double remote) const {
    if (nic_pair.bytes_per_s <= 0) {
      return nic;
    }
    return {std::min(nic.bytes_per_s, remote * nic_pair.bytes_per_s)};
  }

  /// Seconds one SM spends per byte it sends, tokens of `token_bytes` each (0: unknown, no
  /// per-pair time); 0 where its SMs bind nothing. An exchange's bound is bytes x this / SMs.
  double sm_seconds_per_byte(double token_bytes) const {
    if (sm_rate.bytes_per_s <= 0) {
      return 0;
    }
    return (token_bytes > 0 ? sm_pair.seconds() / token_bytes : 0.0) + 1 / sm_rate.bytes_per_s;
  }
};

/// A library's costs on one GPU model, by path and op (dispatch, combine: ExchangeOp's order).
struct LibraryRates {
  std::array<PathCost, 2> intranode{};
  std::array<PathCost, 2> internode{};
  /// The SMs its kernels hold by default (a workload's comm_sms 0), at which its rates were
  /// fitted; 0 where no op says what its SMs move.
  std::int64_t sms = 0;

  /// The costs of op `op` (ExchangeOp's order) within a node, or across nodes.
  const PathCost& cost(bool across, std::size_t op) const {
    return (across ? internode : intranode)[op];
  }
  /// The SMs its kernels hold with a workload's `comm_sms` (0: its own count).
  std::int64_t held_sms(std::int64_t comm_sms) const { return comm_sms > 0 ? comm_sms : sms; }
};

/// A data file's library on the cluster's GPU: its rates, or why it has none there (the file
/// is missing, or names no constants for this GPU), which the checks report when a workload
/// picks the library.
struct LibraryFile {
  std::string name;  ///< the data file's name, "pplx_kernels"
  std::optional<LibraryRates> rates;
  std::string missing;  ///< why `rates` is empty
};

/// The data files' libraries that an experiment read, by name.
struct LibraryFiles {
  std::vector<LibraryFile> files;

  /// The library whose data file is `name`; null: not read.
  const LibraryFile* find(std::string_view name) const {
    for (const LibraryFile& f : files) {
      if (f.name == name) {
        return &f;
      }
    }
    return nullptr;
  }
};

}  // namespace hopsim::work
