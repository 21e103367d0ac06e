// ZeRO-3 (FSDP): a pass through a stage's layers when each layer's parameters must be gathered
// over data parallelism before it computes. The gathers run one after another on their own
// stream and are prefetched one layer ahead: layer k's gather is issued when layer k - 1
// starts computing (FSDP's default), so it hides under that layer's compute when it is shorter.
#pragma once

#include <span>

#include "sim/units.hpp"

namespace hopsim::work {

/// The length of a pass (from its start to its last layer's end) whose layer k computes for
/// `compute[k]` after its parameters' gather of `gather[k]` ends:
///   gather k starts at max(gather k-1 end, compute k-1 start)  (the pass's start for k = 0)
///   compute k starts at max(compute k-1 end, gather k end).
/// The first gather is always exposed; with every gather no longer than the compute before
/// it, that is all: gather[0] + sum(compute). Both spans have one entry per layer.
Time prefetched_pass(std::span<const Time> compute, std::span<const Time> gather);

}  // namespace hopsim::work
