// Figures a cluster file accepts but no shipping hardware reaches: warnings, not errors (a
// what-if may ask about hardware that does not exist yet), each with its unit and the likely
// slip (Gb/s for GB/s, ns for us).
#pragma once

#include <string>
#include <vector>

#include "tools/config/node.hpp"

namespace hopsim::config {

/// The warnings of the cluster document at `root` ("WHERE: /pointer: message", WHERE the file
/// or the --set argument that wrote the value). Reads only keys that are present.
std::vector<std::string> cluster_plausibility(const Node& root);

}  // namespace hopsim::config
