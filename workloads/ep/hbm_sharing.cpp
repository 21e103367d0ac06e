// HBM shared between a layer's exchanges and its memory-bound kernels.
#include "workloads/ep/hbm_sharing.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "workloads/compute/kernel_class.hpp"

namespace hopsim::work {

double exchange_hbm_share(const Plan& plan, double hbm_bytes_per_s) {
  double bytes = 0;
  double computing = 0;
  for (const PlanTask& t : plan.tasks()) {
    if (t.kind == PlanTaskKind::Flow && t.src != t.dst) {
      bytes += 2.0 * static_cast<double>(t.bytes.n);  // read at one end, written at the other
    } else if (t.kind == PlanTaskKind::Compute) {
      computing += t.duration.seconds();
    }
  }
  if (computing <= 0 || hbm_bytes_per_s <= 0) {
    return 0;
  }
  return std::min(0.5, kExchangeHbmTouches * bytes / computing / hbm_bytes_per_s);
}

void share_hbm(Plan& plan, double share) {
  if (share <= 0) {
    return;
  }
  std::size_t gpus = 0;
  for (const PlanTask& t : plan.tasks()) {
    gpus = std::max(gpus, t.src.index() + 1);
  }
  KernelSpeeds speed = speeds_at(1.0);
  for (std::size_t k = 0; k < kKernelClasses; ++k) {
    if (memory_bound(static_cast<KernelClass>(k))) {
      speed[k] = 1.0 - share;
    }
  }
  plan.slow_compute(std::vector<KernelSpeeds>(gpus, speed));
}

}  // namespace hopsim::work
