// How fast another GPU model runs a kernel that the compute model priced for the cluster's
// GPU: the nodes of another type in a mixed cluster (docs/what-ifs.md#mixed-clusters).
#pragma once

#include "topology/spec.hpp"
#include "workloads/compute/kernel_class.hpp"

namespace hopsim::work {

/// The share of `base`'s rate at which `other` runs kernels of class `k`, by the roofline the
/// compute model falls back on: GEMMs by peak BF16 TFLOP/s x gemm_efficiency, attention by
/// peak BF16 x attention_efficiency, memory-bound classes and Other (a step's optimizer) by
/// HBM bandwidth x memory_efficiency. Exactly 1 for the same figures.
double type_speed(const topo::GpuSpec& base, const topo::GpuSpec& other, KernelClass k);

/// The share of `base`'s rate at which the GPUs of GpuType perturbation `p` run kernels of
/// class `k`: its class_speed where the experiment priced it (gpu_types.hpp), else the
/// roofline ratio above.
double type_speed(const topo::GpuSpec& base, const topo::Perturbation& p, KernelClass k);

}  // namespace hopsim::work
