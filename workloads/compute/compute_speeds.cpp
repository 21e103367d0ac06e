// Each GPU's speed per kernel class (compute_speeds.hpp).
#include "workloads/compute/compute_speeds.hpp"

#include <algorithm>

#include "sim/assert.hpp"
#include "sim/mix64.hpp"

namespace hopsim::work {

ComputeSpeeds::ComputeSpeeds(const topo::Spec& cluster, std::span<const PricedGpuType> priced) {
  const auto count = static_cast<std::size_t>(cluster.gpu_count());
  for (const topo::Perturbation& p : cluster.perturbations) {
    const bool typed = p.part == topo::PerturbedPart::GpuType;
    if ((p.part != topo::PerturbedPart::Compute && !typed) || p.gpus.empty()) {
      continue;
    }
    HOPSIM_ASSERT(p.compute_speed > 0, "a perturbation of speed {}", p.compute_speed);
    gpus_.resize(count);
    if (typed) {
      types_.push_back(type_speeds(cluster.gpu, p, priced));
    }
    for (const int rank : p.gpus) {
      HOPSIM_ASSERT(rank >= 0 && static_cast<std::size_t>(rank) < count,
                    "a perturbation of GPU {} of {}", rank, count);
      perturbed_.emplace_back(rank);
      Gpu& g = gpus_[static_cast<std::size_t>(rank)];
      if (typed) {
        g.type = types_.size();
        continue;
      }
      g.compute *= p.compute_speed;
      if (p.kernel_draw) {
        const topo::KernelDraw& d = *p.kernel_draw;
        g.draws = true;
        g.draw_lo = d.speed_min;
        g.draw_span = d.speed_max - d.speed_min;
        g.draw_mean = d.mean_speed();
        g.draw_key = sim::mix64(sim::mix64(d.seed ^ (0xD1B54A32D192ED03ULL * (p.entry + 1))) ^
                                static_cast<std::uint64_t>(rank));
      }
    }
  }
  std::ranges::sort(perturbed_);
  const auto [first, last] = std::ranges::unique(perturbed_);
  perturbed_.erase(first, last);
}

double ComputeSpeeds::combined(const Gpu& g, double drawn, KernelClass k) const {
  const double type = g.type == 0 ? 1.0 : types_[g.type - 1][static_cast<std::size_t>(k)];
  return g.compute * drawn * type;
}

double ComputeSpeeds::speed(topo::GpuId gpu, KernelClass k) const {
  if (gpus_.empty()) {
    return 1.0;
  }
  const Gpu& g = gpus_[gpu.index()];
  return combined(g, g.draw_mean, k);
}

KernelSpeeds ComputeSpeeds::speeds(topo::GpuId gpu) const {
  KernelSpeeds out{};
  for (std::size_t k = 0; k < kKernelClasses; ++k) {
    out[k] = speed(gpu, static_cast<KernelClass>(k));
  }
  return out;
}

double ComputeSpeeds::kernel_speed(topo::GpuId gpu, KernelClass k, std::uint64_t kernel) const {
  if (gpus_.empty()) {
    return 1.0;
  }
  const Gpu& g = gpus_[gpu.index()];
  if (g.draw_span == 0.0) {
    return combined(g, g.draw_lo, k);
  }
  const double unit =
      static_cast<double>(sim::mix64(g.draw_key + kernel * 0x9E3779B97F4A7C15ULL) >> 11U) *
      0x1.0p-53;
  return combined(g, g.draw_lo + g.draw_span * unit, k);
}

}  // namespace hopsim::work
