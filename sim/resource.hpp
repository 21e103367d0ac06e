// The identifier of a shared resource (a link, to the topology) in the fluid solver.
#pragma once

#include <cstdint>

namespace hopsim::sim {

/// Dense index of a capacity-limited resource; routes are lists of these.
using ResourceId = std::uint32_t;

}  // namespace hopsim::sim
