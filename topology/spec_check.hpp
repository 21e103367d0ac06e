// The checks a cluster description must pass before a graph is built from it.
#pragma once

#include "sim/problem.hpp"
#include "topology/spec.hpp"

namespace hopsim::topo {

/// Largest clusters and fabrics hopsim builds: ranks are ints, link ids 32-bit, and the link
/// table (about 100 bytes a link) must stay small next to the flows it carries.
inline constexpr std::int64_t kMaxGpus = std::int64_t{1} << 24;
inline constexpr std::int64_t kMaxLinks = 4'000'000;

/// Every problem with `spec`, as JSON pointers into a cluster file ("/fabric/spines").
/// A Cluster is built only from a spec with none.
Problems check_spec(const Spec& spec);

/// Links the cluster of `spec` will have: 4 per GPU, 2 per leaf and spine.
std::int64_t link_count(const Spec& spec);

}  // namespace hopsim::topo
