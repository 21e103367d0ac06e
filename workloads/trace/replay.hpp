// How a Chakra trace's nodes become units of the replay: a compute or metadata node alone; a
// collective as one unit of every member rank's node (matched in order per process group);
// a send and its recv as one unit. Units come in a topological order of their dependencies,
// so each rank's kernels are issued to their streams in an order that cannot deadlock.
#pragma once

#include <cstdint>
#include <utility>
#include <variant>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/trace/chakra_job.hpp"

namespace hopsim::work {

/// A trace rank and the index of one of its nodes in file order.
struct NodeRef {
  int rank = 0;
  std::uint32_t index = 0;
  friend auto operator<=>(const NodeRef&, const NodeRef&) = default;
};

struct ReplayUnit {
  enum class Kind : std::uint8_t { Node, Collective, SendRecv };
  Kind kind = Kind::Node;
  /// Node: the node. Collective: each member rank's node, in the group's order. SendRecv: the
  /// send, then the recv.
  std::vector<NodeRef> members;
  std::vector<std::uint32_t> after;  ///< units (indices in Replay::units) it waits for
};

struct Replay {
  std::vector<ReplayUnit> units;  ///< in a topological order
};

/// The replay of `job`'s trace, or the first problem: an unknown process group, collectives
/// that differ across a group, an unmatched send or recv, a dependency cycle. Messages name
/// the file, rank and node ("FILE: rank R: node ID: ...").
std::variant<Replay, Problem> match_trace(const ChakraJob& job);

/// The members of a collective node's group: `job.groups[node.group]`, or every trace rank
/// when it names none.
std::vector<int> group_ranks(const ChakraJob& job, const EtNode& node);

}  // namespace hopsim::work
