// Each GPU's speed per kernel class: perturbations, draws and GPU models combined in one place.
#include "workloads/compute/compute_speeds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "tests/approx.hpp"

using namespace hopsim::work;
namespace topo = hopsim::topo;

namespace {

// The GPU model of the clusters below: 1000 TFLOP/s, 2 TB/s of HBM.
topo::GpuSpec slow_hbm() {
  topo::GpuSpec gpu;
  gpu.name = "slow HBM";
  gpu.peak_bf16_tflops = 1000;
  gpu.hbm_GBps = 2000;
  return gpu;
}

topo::Perturbation slower(std::vector<int> gpus, double speed) {
  topo::Perturbation p;
  p.gpus = std::move(gpus);
  p.compute_speed = speed;
  return p;
}

// Node 1's GPUs another model: 1.5x the HBM bandwidth, the same FLOP/s.
topo::Perturbation faster_hbm_node() {
  topo::Perturbation p;
  p.part = topo::PerturbedPart::GpuType;
  p.nodes = {1};
  p.gpu = slow_hbm();
  p.gpu->name = "fast HBM";
  p.gpu->hbm_GBps = 3000;
  for (int g = 8; g < 16; ++g) {
    p.gpus.push_back(g);
  }
  return p;
}

// 2 nodes of 8 slow_hbm() GPUs with `list`, each perturbation's entry its position.
topo::Spec two_nodes(std::vector<topo::Perturbation> list = {}) {
  topo::Spec spec;
  spec.nodes = 2;
  spec.gpu = slow_hbm();
  for (std::size_t i = 0; i < list.size(); ++i) {
    list[i].entry = i;
  }
  spec.perturbations = std::move(list);
  return spec;
}

}  // namespace

TEST_CASE("compute speeds: every GPU at the compute model's rate without perturbations") {
  const ComputeSpeeds none;
  CHECK(none.speed(topo::GpuId{5}, KernelClass::GemmFprop) == 1.0);
  CHECK(none.kernel_speed(topo::GpuId{5}, KernelClass::Norm, 42) == 1.0);
  CHECK_FALSE(none.draws(topo::GpuId{5}));
  CHECK(none.perturbed().empty());
  const ComputeSpeeds healthy(two_nodes(), {});
  CHECK(healthy.speeds(topo::GpuId{15}) == speeds_at(1.0));
  CHECK(healthy.perturbed().empty());
}

TEST_CASE("compute speeds: (product of compute_speed) x the GPU model's class speed") {
  const topo::Spec spec =
      two_nodes({slower({1}, 0.4), faster_hbm_node(), slower({9}, 0.5), slower({1}, 0.5)});
  const ComputeSpeeds speeds(spec, {});
  // GPU 1: 0.4 x 0.5 in every class; GPU 9: 0.5, times 1.5 for memory-bound classes and the
  // optimizer (the roofline: 3 against 2 TB/s), 1 for GEMMs (the same FLOP/s).
  CHECK(speeds.speeds(topo::GpuId{1}) == speeds_at(0.4 * 0.5));
  CHECK(speeds.speed(topo::GpuId{9}, KernelClass::Norm) == 0.5 * 1.5);
  CHECK(speeds.speed(topo::GpuId{9}, KernelClass::Other) == 0.5 * 1.5);
  CHECK(speeds.speed(topo::GpuId{9}, KernelClass::GemmFprop) == 0.5);
  CHECK(speeds.speed(topo::GpuId{10}, KernelClass::Norm) == 1.5);
  CHECK(speeds.speeds(topo::GpuId{0}) == speeds_at(1.0));
  // Without draws a kernel's own speed is the GPU's for its class.
  CHECK(speeds.kernel_speed(topo::GpuId{9}, KernelClass::Norm, 7) == 0.5 * 1.5);
  const std::vector<topo::GpuId> named(speeds.perturbed().begin(), speeds.perturbed().end());
  std::vector<topo::GpuId> expected{topo::GpuId{1}};
  for (int g = 8; g < 16; ++g) {
    expected.emplace_back(g);
  }
  CHECK(named == expected);  // ascending, each once

  // Priced by the workload's kernels, the model's class speeds are the experiment's.
  KernelSpeeds priced = speeds_at(1.25);
  priced[static_cast<std::size_t>(KernelClass::GemmFprop)] = 0.8;
  const std::vector<PricedGpuType> types{{.entry = 1, .speed = priced, .calibration = "t.json"}};
  const ComputeSpeeds by_table(spec, types);
  CHECK(by_table.speed(topo::GpuId{9}, KernelClass::GemmFprop) == 0.5 * 0.8);
  CHECK(by_table.speed(topo::GpuId{12}, KernelClass::Norm) == 1.25);
  CHECK(type_speeds(spec.gpu, spec.perturbations[1], types) == priced);
  CHECK(type_speeds(spec.gpu, spec.perturbations[1],
                    {})[static_cast<std::size_t>(KernelClass::Norm)] == 1.5);
}

TEST_CASE("compute speeds: a drawn speed counts at its mean, and each kernel at its own draw") {
  topo::Perturbation p = slower({3}, 0.5);
  p.kernel_draw = topo::KernelDraw{.speed_min = 0.8, .speed_max = 1.0, .seed = 7};
  const ComputeSpeeds speeds(two_nodes({p}), {});
  CHECK(speeds.draws(topo::GpuId{3}));
  CHECK_FALSE(speeds.draws(topo::GpuId{2}));
  // The harmonic mean of [0.8, 1]: 0.2 / ln(1.25), the constant speed of the expected time.
  const double mean = p.kernel_draw->mean_speed();
  CHECK(mean == hopsim::test::approx(0.2 / std::log(1.25)));
  CHECK(speeds.speed(topo::GpuId{3}, KernelClass::Norm) == 0.5 * mean);
  double lowest = 1.0;
  double highest = 0.0;
  for (std::uint64_t k = 0; k < 1000; ++k) {
    const double s = speeds.kernel_speed(topo::GpuId{3}, KernelClass::GemmFprop, k);
    CHECK(s == speeds.kernel_speed(topo::GpuId{3}, KernelClass::GemmFprop, k));  // repeatable
    lowest = std::min(lowest, s);
    highest = std::max(highest, s);
  }
  CHECK(lowest >= 0.5 * 0.8);
  CHECK(highest <= 0.5 * 1.0);
  CHECK(highest - lowest > 0.09);  // 1,000 draws spread over most of the 0.1 range
  CHECK(speeds.kernel_speed(topo::GpuId{2}, KernelClass::GemmFprop, 5) == 1.0);
}
