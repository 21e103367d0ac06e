// The speed each GPU computes at, per kernel class: the one place that combines what changes it
// (a perturbation's compute_speed, a straggler's draw, a speed drawn per kernel, another GPU
// model), read by every plan that runs on those GPUs (docs/what-ifs.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "topology/ids.hpp"
#include "topology/spec.hpp"
#include "workloads/compute/gpu_type_speed.hpp"
#include "workloads/compute/kernel_class.hpp"

namespace hopsim::work {

/// Every GPU's speed for each kernel class, as a share of the rate the compute model prices
/// kernels at (the cluster GPU's), built once per run from the cluster's perturbations as the
/// user wrote them and the experiment's priced GPU types. For GPU g and class k:
///
///   speed(g, k) = (c_g x d_g) x t_g[k]
///
/// where c_g is the compute_speed of g's Compute perturbations multiplied in list order (a
/// straggler draw is one such perturbation per GPU drawn), d_g its kernel draw's harmonic mean
/// (kernel_speed(): the kernel's own draw instead; 1 without a draw) and t_g[k] the class speed
/// of its node's GPU model (PricedGpuType, else the roofline ratio; 1 on the cluster's model).
/// A kernel that takes t at the compute model's rate takes ceil(t / speed) on g.
class ComputeSpeeds {
 public:
  /// Every GPU at the compute model's rate.
  ComputeSpeeds() = default;
  /// The speeds that `cluster`'s Compute and GpuType perturbations give its GPUs, the GPU types
  /// at `priced`'s class speeds.
  ComputeSpeeds(const topo::Spec& cluster, std::span<const PricedGpuType> priced);

  /// The speed of GPU `gpu` for a kernel of class `k`, a drawn speed counted at its mean.
  double speed(topo::GpuId gpu, KernelClass k) const;
  /// speed() for every class.
  KernelSpeeds speeds(topo::GpuId gpu) const;
  /// The speed of kernel `kernel` (its place in the plan) of class `k` on `gpu`, as the runner
  /// simulates it: speed() with the kernel's own draw in place of the mean. The same GPU,
  /// kernel and seed give the same speed on every platform.
  double kernel_speed(topo::GpuId gpu, KernelClass k, std::uint64_t kernel) const;

  /// Whether `gpu` draws a speed per kernel.
  bool draws(topo::GpuId gpu) const { return !gpus_.empty() && gpus_[gpu.index()].draws; }

  /// The GPUs that a Compute or GpuType perturbation names, ascending.
  std::span<const topo::GpuId> perturbed() const { return perturbed_; }

 private:
  struct Gpu {
    double compute = 1.0;  // c_g
    bool draws = false;
    double draw_lo = 1.0;  // the draw's range, [draw_lo, draw_lo + draw_span]
    double draw_span = 0.0;
    double draw_mean = 1.0;      // d_g in speed()
    std::uint64_t draw_key = 0;  // the seed, the perturbation's entry and the GPU, mixed
    std::size_t type = 0;        // 0: the cluster's model; else 1 + its index in types_
  };

  double combined(const Gpu& g, double drawn, KernelClass k) const;
  std::vector<Gpu> gpus_;            // [rank]; empty: every GPU at the compute model's rate
  std::vector<KernelSpeeds> types_;  // t_g per GpuType perturbation, in list order
  std::vector<topo::GpuId> perturbed_;
};

}  // namespace hopsim::work
