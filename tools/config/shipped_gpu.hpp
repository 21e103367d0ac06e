// A GPU by its model's name ("H100"), with the figures of the shipped cluster that has it: what
// `check-calibration --gpu NAME` holds a table against.
#pragma once

#include <optional>
#include <string>

#include "topology/spec.hpp"

namespace hopsim::config {

struct ShippedGpu {
  topo::GpuSpec gpu;
  std::string cluster;  ///< the cluster preset's file, as reports show it
};

/// The GPU of the first cluster preset (by name) whose GPU's model (the first word of its
/// name) is the first word of `name`, case-insensitively; none when no shipped cluster has it.
/// A cluster preset that does not parse is a ConfigError naming it.
std::optional<ShippedGpu> shipped_gpu(const std::string& name);

}  // namespace hopsim::config
