// A Chakra execution trace as plain data: per rank, the nodes the replay needs (what they
// do, what they wait for, how long they took, what they move). tools/chakra reads and writes
// the protobuf files; this layer never sees them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/units.hpp"
#include "workloads/collectives/algorithms.hpp"

namespace hopsim::work {

/// The node types the replay runs (Chakra's METADATA, COMP, COMM_SEND, COMM_RECV,
/// COMM_COLL); memory load/store nodes are refused when the file is read.
enum class EtNodeType : std::uint8_t { Metadata, Compute, Send, Recv, Collective };

/// A collective's kind: one of hopsim's collective ops, a barrier or a broadcast.
struct EtCollective {
  enum class Kind : std::uint8_t { Op, Barrier, Broadcast };
  Kind kind = Kind::Op;
  CollectiveOp op = CollectiveOp::AllReduce;  ///< Kind::Op: which

  /// "all_reduce", ..., "barrier", "broadcast".
  std::string_view name() const {
    return kind == Kind::Barrier     ? "barrier"
           : kind == Kind::Broadcast ? "broadcast"
                                     : op_name(op);
  }
  friend bool operator==(const EtCollective&, const EtCollective&) = default;
};

struct EtNode {
  std::uint64_t id = 0;
  std::string name;
  EtNodeType type = EtNodeType::Compute;
  std::vector<std::uint64_t> deps;  ///< data and control dependencies, in file order
  Time duration{};                  ///< duration_micros
  bool cpu = false;                 ///< is_cpu_op: host work, which holds no GPU stream
  std::optional<std::int64_t> stream;  ///< the CUDA stream of a GPU kernel, when recorded
  double flops = 0;                 ///< num_ops
  std::int64_t tensor_bytes = 0;    ///< tensor_size: bytes the kernel reads and writes
  EtCollective collective;          ///< COMM_COLL: its kind
  std::int64_t comm_bytes = 0;      ///< comm_size
  int peer = -1;                    ///< COMM_SEND: comm_dst; COMM_RECV: comm_src (trace ranks)
  std::int64_t tag = 0;             ///< comm_tag
  std::string group;                ///< pg_name; empty: every rank of the trace
};

/// One rank's file: where it came from and its nodes in file order.
struct EtRank {
  std::string file;
  std::vector<EtNode> nodes;
  /// Dependencies on nodes the file does not hold, dropped as it was read (Chakra's converter
  /// leaves control dependencies on the host operators it removed), and the first of them.
  std::size_t dropped_deps = 0;
  std::string first_dropped;  ///< "node 216 on node 3"
};

/// A name from a trace as a one-line message shows it: control characters as \xNN, at most
/// `max` characters and then "...".
inline std::string shown(std::string_view text, std::size_t max = 60) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      constexpr std::string_view kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return text.size() > max ? out + "..." : out;
}

/// Every rank of one trace, rank r in ranks[r]; `version` is the files' schema version.
struct EtTrace {
  std::string version;
  std::vector<EtRank> ranks;
};

}  // namespace hopsim::work
