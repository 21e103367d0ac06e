// A mixed cluster's other GPU models priced by their own calibration tables: per kernel class,
// the share of the cluster GPU's rate each runs the workload's kernels at
// (docs/what-ifs.md#mixed-clusters).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/compute/calibration.hpp"
#include "workloads/compute/compute_model.hpp"
#include "workloads/costs/layer_costs.hpp"
#include "workloads/experiment/experiment.hpp"

namespace hopsim::work {

/// The calibration the nodes of one GpuType perturbation compute with.
struct TypeCalibration {
  std::shared_ptr<const Calibration> table;  ///< null: the roofline alone
  std::optional<TableScaling> scaling;       ///< the table was made on another GPU
  std::string name;                          ///< its file as reports show it; "none"
};

/// The kernels one GPU of the experiment's layer kind runs, forward and backward, priced by
/// `model`: an attention layer's, a MoE layer's, a transformer layer's (its MoE part after its
/// attention part), a training step's layer and output layer; empty for the kinds without a
/// model (flows, collectives, Chakra traces).
LayerCosts job_kernels(const Experiment& e, const ComputeModel& model);

/// Per kernel class, the share of `base`'s rate at which `other`'s model runs the class's
/// kernels of `kernels_base` (the same kernels priced by `other`: `kernels_other`): their
/// summed times' ratio. A class the job does not run takes the datasheets' roofline ratio
/// (type_speed).
KernelSpeeds class_speeds(const LayerCosts& kernels_base, const LayerCosts& kernels_other,
                          const topo::GpuSpec& base, const topo::GpuSpec& other);

/// Prices each GpuType perturbation into the experiment's gpu_types: its model with
/// `tables[i]` (one per GpuType perturbation, in order) against the experiment's own, over the
/// experiment's kernels.
void price_gpu_types(Experiment& e, const std::vector<TypeCalibration>& tables);

}  // namespace hopsim::work
