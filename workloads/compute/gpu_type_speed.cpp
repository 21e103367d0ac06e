// Kernel rates of another GPU model (gpu_type_speed.hpp).
#include "workloads/compute/gpu_type_speed.hpp"

namespace hopsim::work {
namespace {

bool attention(KernelClass k) {
  return k == KernelClass::AttentionFwd || k == KernelClass::AttentionBwd;
}

// What the roofline says a GPU achieves for kernels of class `k`: TFLOP/s or GB/s.
double achieved(const topo::GpuSpec& gpu, KernelClass k) {
  if (memory_bound(k) || k == KernelClass::Other) {
    return gpu.hbm_GBps * gpu.memory_efficiency;
  }
  return gpu.peak_bf16_tflops * (attention(k) ? gpu.attention_efficiency : gpu.gemm_efficiency);
}

}  // namespace

double type_speed(const topo::GpuSpec& base, const topo::GpuSpec& other, KernelClass k) {
  const double from = achieved(base, k);
  const double to = achieved(other, k);
  return from > 0 && to > 0 ? to / from : 1.0;
}

const PricedGpuType* priced_type(std::span<const PricedGpuType> priced, std::size_t entry) {
  for (const PricedGpuType& t : priced) {
    if (t.entry == entry) {
      return &t;
    }
  }
  return nullptr;
}

KernelSpeeds type_speeds(const topo::GpuSpec& base, const topo::Perturbation& p,
                         std::span<const PricedGpuType> priced) {
  if (const PricedGpuType* t = priced_type(priced, p.entry)) {
    return t->speed;
  }
  KernelSpeeds out = speeds_at(1.0);
  if (p.gpu) {
    for (std::size_t k = 0; k < kKernelClasses; ++k) {
      out[k] = type_speed(base, *p.gpu, static_cast<KernelClass>(k));
    }
  }
  return out;
}

}  // namespace hopsim::work
