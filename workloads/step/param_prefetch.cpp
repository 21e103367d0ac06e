// A pass with prefetched parameter gathers (param_prefetch.hpp).
#include "workloads/step/param_prefetch.hpp"

#include <algorithm>

#include "sim/assert.hpp"

namespace hopsim::work {

Time prefetched_pass(std::span<const Time> compute, std::span<const Time> gather) {
  HOPSIM_ASSERT(compute.size() == gather.size(), "{} layers' compute, {} gathers",
                compute.size(), gather.size());
  Time gather_end;
  Time compute_start;  // of the previous layer (the pass's start before the first)
  Time compute_end;
  for (std::size_t k = 0; k < compute.size(); ++k) {
    gather_end = std::max(gather_end, compute_start) + gather[k];
    compute_start = std::max(compute_end, gather_end);
    compute_end = compute_start + compute[k];
  }
  return compute_end;
}

}  // namespace hopsim::work
