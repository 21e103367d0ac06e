// How fast another GPU model runs a kernel that the compute model priced for the cluster's
// GPU: the nodes of another type in a mixed cluster (docs/what-ifs.md#mixed-clusters).
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "topology/spec.hpp"
#include "workloads/compute/kernel_class.hpp"

namespace hopsim::work {

/// The share of `base`'s rate at which `other` runs kernels of class `k`, by the roofline the
/// compute model falls back on: GEMMs by peak BF16 TFLOP/s x gemm_efficiency, attention by
/// peak BF16 x attention_efficiency, memory-bound classes and Other (a step's optimizer) by
/// HBM bandwidth x memory_efficiency. Exactly 1 for the same figures.
double type_speed(const topo::GpuSpec& base, const topo::GpuSpec& other, KernelClass k);

/// A GpuType perturbation's model priced against the cluster's GPU over the workload's own
/// kernels, each by its own calibration (experiment/gpu_types.hpp): what the experiment holds
/// for it, since the topology keeps the perturbation only as the user wrote it.
struct PricedGpuType {
  std::size_t entry = 0;                ///< the perturbation's position in the experiment's list
  KernelSpeeds speed = speeds_at(1.0);  ///< per kernel class, the share of the cluster GPU's rate
  std::string calibration;  ///< the table its kernels were priced by; "none": the roofline
};

/// `priced`'s entry for perturbation `entry`; null when the experiment did not price it.
const PricedGpuType* priced_type(std::span<const PricedGpuType> priced, std::size_t entry);

/// The share of `base`'s rate at which the GPUs of GpuType perturbation `p` run each kernel
/// class: as `priced` holds it, else the roofline ratio above.
KernelSpeeds type_speeds(const topo::GpuSpec& base, const topo::Perturbation& p,
                         std::span<const PricedGpuType> priced);

}  // namespace hopsim::work
