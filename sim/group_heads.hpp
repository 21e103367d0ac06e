// The earliest flows of a group of classes, for the flow network's completion events.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/fair_share.hpp"

namespace hopsim::sim {

using FlowId = std::uint32_t;

/// A class's earliest flow, keyed in its group's work: target - class offset.
struct GroupHead {
  double key;
  FairShare::ClassId cls;
  FlowId flow;

  bool operator>(const GroupHead& o) const { return key != o.key ? key > o.key : cls > o.cls; }
};

inline constexpr FlowId kNoFlow = ~FlowId{0};
inline constexpr std::uint32_t kNoHeap = ~std::uint32_t{0};

/// A lazy min-heap of a group's classes' earliest flows: entries go stale when their flow
/// finishes or their class leaves; the heap is rebuilt when the group's layout changes.
struct ClassHeap {
  std::vector<GroupHead> heap;
  std::uint64_t layout = 0;  // the group's layout when the heap was built; 0: none
};

/// Per group, in one cache line: the earliest flow cached, what its completion entries were
/// last computed for, and (groups of several classes only) a ClassHeap.
struct alignas(64) GroupHeads {
  GroupHead top{};  // the group's earliest flow, while top_layout is current
  std::uint64_t top_layout = 0;
  double scheduled_key = 0;  // the head and the rate its completion entries were computed for
  double scheduled_rate = 0;
  double slack = 0;                 // approximate mode: the slack of flow slack_flow
  FlowId scheduled_flow = kNoFlow;  // with scheduled_key
  FlowId slack_flow = kNoFlow;
  std::uint32_t heap = kNoHeap;  // index of its ClassHeap, if it has one
  std::uint32_t refresh = 0;     // == the flow network's refresh round while in its refresh list
};

static_assert(sizeof(GroupHeads) == 64);

}  // namespace hopsim::sim
