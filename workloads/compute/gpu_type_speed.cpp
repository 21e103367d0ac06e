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

double type_speed(const topo::GpuSpec& base, const topo::Perturbation& p, KernelClass k) {
  const auto i = static_cast<std::size_t>(k);
  if (i < p.class_speed.size()) {
    return p.class_speed[i];
  }
  return p.gpu ? type_speed(base, *p.gpu, k) : 1.0;
}

}  // namespace hopsim::work
