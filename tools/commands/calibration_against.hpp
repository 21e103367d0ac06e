// `hopsim check-calibration TABLE --against OTHER --cluster FILE`: each timed cell of a table
// beside what a run would price the same kernel at with another table (a measured table against
// the published one it could replace, say).
#pragma once

#include <string>

#include "topology/spec.hpp"
#include "workloads/compute/calibration.hpp"

namespace hopsim::tools {

/// Reads `against_path` as a run reads a calibration it names (its base attached; scaled from
/// its own GPU's datasheet figures when it was made for another GPU than `gpu`, else an error
/// naming the file), then prints per family of `table`'s own tables, and in all, the median and
/// range of the signed differences between that compute model's answer on `gpu` and the timed
/// cells; with `cells`, each cell too (both times, the difference, the answer's source).
/// Returns 0.
int print_against(const work::Calibration& table, const std::string& table_path,
                  const std::string& against_path, const topo::GpuSpec& gpu, bool cells);

}  // namespace hopsim::tools
