// Reads an experiment's `perturbations`: what-ifs off the healthy cluster (docs/what-ifs.md).
#pragma once

#include <vector>

#include "tools/config/node.hpp"
#include "topology/spec.hpp"

namespace hopsim::config {

/// /perturbations: each a GPU list and either a compute speed or, for their NVLink or NIC
/// links, a bandwidth share and extra latency; or a straggler draw (a share of the GPUs and a
/// range of speeds), which work::draw_stragglers turns into GPUs. Whether the GPUs exist is
/// work::check's.
std::vector<topo::Perturbation> parse_perturbations(const Node& list);

}  // namespace hopsim::config
