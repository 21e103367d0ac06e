// `hopsim check-calibration`: reads a calibration table as the simulator will, and summarizes it.
#pragma once

#include <string>

#include "tools/commands/command.hpp"

namespace hopsim::tools {

/// Parses `path` (errors are ConfigErrors naming the file and JSON pointer), optionally checks
/// it against a GPU name, checks its plausibility (against the GPU of the cluster file
/// `cluster_path` where given, else against the table's own ceilings; warnings on stderr), and
/// prints each table's family and how many cells are measured. With `against` (which needs
/// `cluster_path`), prints instead each timed cell beside what a run on the cluster's GPU would
/// price it at with the table `against`, per family or with `cells` per cell
/// (calibration_against.hpp).
int check_calibration_command(const std::string& path, const std::string& gpu_name,
                              const std::string& cluster_path, const std::string& against = {},
                              bool cells = false);

/// `hopsim check-calibration TABLE`: its options, and check_calibration_command.
Command declare_check_calibration_command(CLI::App& program);

}  // namespace hopsim::tools
