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

/// Per group: a lazy min-heap of its classes' earliest flows (entries go stale when their flow
/// finishes or their class leaves; the heap is rebuilt when the group's layout changes), the
/// earliest flow cached, and what its completion entries were last computed for.
struct GroupHeads {
  std::vector<GroupHead> heap;
  std::uint64_t layout = 0;  // the group's layout when the heap was built; 0: none
  GroupHead top{};           // the group's earliest flow, while top_layout is current
  std::uint64_t top_layout = 0;
  GroupHead scheduled{};  // the head and the rate its completion entries were computed for
  double scheduled_rate = 0;
};

}  // namespace hopsim::sim
