// Reads an experiment's `perturbations`: what-ifs off the healthy cluster (docs/what-ifs.md).
#pragma once

#include <vector>

#include "tools/config/node.hpp"
#include "topology/spec.hpp"

namespace hopsim::config {

/// /perturbations: each some GPUs (listed, whole nodes or rails of `cluster`) and either a
/// compute speed or, for their NVLink or NIC links, a bandwidth share and extra latency, or
/// failed; or spine links (leaves x spines) changed alike; or a straggler draw (a share of the
/// GPUs and a range of speeds), which work::draw_stragglers turns into GPUs. Whether listed
/// GPUs exist, and whether failures leave a route, is work::check's.
std::vector<topo::Perturbation> parse_perturbations(const Node& list, const topo::Spec& cluster);

}  // namespace hopsim::config
