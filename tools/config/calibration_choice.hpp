// "calibration": "auto": the shipped calibration table for the cluster's GPU, or the nearest
// shipped one with its times scaled to that GPU, or none (the roofline).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "topology/spec.hpp"
#include "workloads/compute/calibration.hpp"
#include "workloads/compute/compute_model.hpp"

namespace hopsim::config {

struct CalibrationChoice {
  std::string file;  ///< the chosen table's file as reports show it; empty: none, the roofline
  std::shared_ptr<work::Calibration> table;
  /// Set when the table was made on another GPU: its datasheet figures, to scale by.
  std::optional<work::TableScaling> scaling;
  std::string note;  ///< what was chosen and why, one line for the report
  std::string why;   ///< why this table: "its device, "NVIDIA H100 ...", names the H100"
};

/// Among the calibration presets whose `auto` is not false (list_presets, first root wins per
/// name, by name): the first made for `gpu` (calibration_fits; one whose device names the GPU
/// before one that lists it as equivalent, measured before published), where a measured one
/// is taken only when every family of its own passes judge_measured against the first
/// published one (the note then says which families it rejected and why); else the one whose
/// datasheet figures are nearest to the GPU's (the smallest |ln(P_table / P_gpu)| +
/// |ln(HBM_table / HBM_gpu)|, BF16 peaks), scaled (work::TableScaling); else none. A preset
/// that does not parse is a ConfigError naming it.
CalibrationChoice choose_calibration(const topo::GpuSpec& gpu);

}  // namespace hopsim::config
