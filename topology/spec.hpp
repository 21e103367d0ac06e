// The plain description of a cluster that the topology builders turn into a graph.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/units.hpp"

namespace hopsim::topo {

enum class FabricKind { RailOptimized, FatTree };

/// How a flow between GPUs of different local index on different nodes crosses the fabric.
enum class CrossRail {
  Spine,   ///< leaf of the source rail -> spine -> leaf of the destination rail
  NvLink,  ///< first over NVLink to the source-node GPU on the destination's rail (PXN)
};

/// Datasheet figures of one GPU model. Zero means "not given": the compute model refuses to
/// run without them rather than assume another GPU's.
struct GpuSpec {
  std::string name;  ///< e.g. "H100 SXM"
  double peak_bf16_tflops = 0;  ///< dense
  double peak_fp8_tflops = 0;   ///< dense
  /// Dense NVFP4 (Blackwell); 0: none. The nvfp4 recipe's GEMMs run at it, and it tells GPU
  /// generations apart when a calibration table is scaled from the nearest GPU.
  double peak_fp4_tflops = 0;
  /// An NVFP4 GEMM's share of the FP4 peak over its FP8 GEMM's share of the FP8 peak.
  double nvfp4_gemm_ratio = 1.0;
  /// What a process can allocate (the CUDA runtime's total, cudaDeviceProp::totalGlobalMem:
  /// 81,089 MiB on an "80 GB" H100), 10^9 B
  double hbm_GB = 0;    // NOLINT(readability-identifier-naming): 10^9 B, unit in the name
  double hbm_GBps = 0;  // NOLINT(readability-identifier-naming): 10^9 B/s
  int sms = 0;          ///< streaming multiprocessors
  /// Roofline fallback of the compute model (no calibration table answers): achieved over
  /// peak for GEMMs and for attention kernels. Defaults: H100 at 700 W (docs/compute-model.md).
  double gemm_efficiency = 0.7;
  double attention_efficiency = 0.6;
  /// An FP8 weight-gradient GEMM's throughput over the forward's, and memory-bound kernels'
  /// achieved share of HBM bandwidth (docs/compute-model.md gives the sources).
  double fp8_wgrad_ratio = 0.68;
  double memory_efficiency = 0.8;
  /// Memory a training process holds before its first tensor, 10^9 B: the CUDA context (with
  /// lazy module loading), and each NCCL communicator it uses (docs/training-step.md#memory)
  double context_GB = 0.4;       // NOLINT(readability-identifier-naming): unit in the name
  /// What copies between the GPU and host memory reach per direction, 10^9 B/s (PCIe Gen5 x16
  /// on Hopper SXM: 64 line rate; docs/training-step.md#activation-offload)
  double host_GBps = 55.6;  // NOLINT(readability-identifier-naming): unit in the name
  double communicator_GB = 0.69;  // NOLINT(readability-identifier-naming): unit in the name
};

/// What a perturbation changes: its GPUs' compute, or their NVLink or NIC links, or the links
/// between some leaves and some spines, or (whole nodes) the GPU model.
enum class PerturbedPart { Compute, NvLink, Nic, Spine, GpuType };

/// Slow GPUs drawn at random: `share` of the GPUs the workload runs on (at least one), each
/// computing at a speed drawn uniformly from [speed_min, speed_max], with the experiment's seed.
struct StragglerDraw {
  double share = 0;
  double speed_min = 1.0;
  double speed_max = 1.0;
  int population = 0;  ///< how many GPUs it was drawn from (set by the draw)
};

/// Kernel-to-kernel jitter: each kernel a GPU runs at its own speed, drawn uniformly from
/// [speed_min, speed_max] with the experiment's seed, the perturbation's entry, the GPU and the
/// kernel's place in the plan (the workloads draw it when they simulate the plan).
struct KernelDraw {
  double speed_min = 1.0;
  double speed_max = 1.0;
  std::uint64_t seed = 0;  ///< the experiment's (set when it is read)
  /// The constant speed that gives a kernel its expected time under the draw: the harmonic
  /// mean of the range, (max - min) / ln(max / min).
  double mean_speed() const {
    return speed_max == speed_min ? speed_min
                                  : (speed_max - speed_min) / std::log(speed_max / speed_min);
  }
};

/// A what-if on some GPUs: their kernels at `compute_speed` of the rate the compute model
/// gives (0.95: 5% slow), or their links of one kind, both directions, at `bandwidth` of
/// their rate and `extra_latency` slower, or failed. Perturbations of one GPU multiply and add
/// up. Spine links are named by leaves and spines instead of GPUs.
struct Perturbation {
  std::vector<int> gpus;  ///< every GPU it applies to (a node's or rail's, spelled out)
  std::vector<int> nodes;  ///< as the experiment named them: whole nodes...
  std::vector<int> rails;  ///< ... or rails (a local index on every node); else `gpus` itself
  std::vector<int> leaves;  ///< Spine: the leaves whose spine links change; empty: every leaf
  std::vector<int> spines;  ///< Spine: the spines they lead to; empty: every spine
  PerturbedPart part = PerturbedPart::Compute;
  double compute_speed = 1.0;
  double bandwidth = 1.0;
  Time extra_latency;
  bool failed = false;  ///< the links carry nothing: traffic takes a detour (failures.hpp)
  /// GpuType: the nodes' GPUs are this model instead of the cluster's (their links stay the
  /// cluster's), as the cluster file `gpu_source` describes it.
  std::optional<GpuSpec> gpu;
  std::string gpu_source;
  /// Its position in the experiment's list (/perturbations/entry); a draw's GPUs share it.
  std::size_t entry = 0;
  /// A straggler draw: before the draw (gpus empty) what to draw; after it, on each GPU drawn
  /// (one perturbation per GPU, its own compute_speed), what it was drawn from.
  std::optional<StragglerDraw> drawn;
  /// Compute: each kernel also at a speed of its own, drawn per kernel (on top of
  /// compute_speed).
  std::optional<KernelDraw> kernel_draw;
};

/// Whether a perturbation changes links (NVLink, NIC or spine) rather than GPUs.
inline bool on_links(const Perturbation& p) {
  return p.part == PerturbedPart::NvLink || p.part == PerturbedPart::Nic ||
         p.part == PerturbedPart::Spine;
}

/// Bandwidth per direction and latency of one kind of link.
struct LinkParams {
  Bandwidth bandwidth;  ///< what the links carry (the achievable figure, unless asked otherwise)
  Time latency;
  Bandwidth peak{};  ///< the datasheet line rate, which closed forms quote; 0: same as bandwidth
  Bandwidth line_rate() const { return peak.bytes_per_s > 0 ? peak : bandwidth; }
};

struct Spec {
  std::string name = "cluster";
  int nodes = 1;
  int gpus_per_node = 8;
  GpuSpec gpu;
  /// GPU <-> NVSwitch, per GPU and per direction.
  LinkParams nvlink{Bandwidth::gigabytes_per_s(450), Time::ns(715)};
  /// NIC <-> leaf, per GPU (one NIC per GPU) and per direction.
  LinkParams nic{Bandwidth::gigabytes_per_s(50), Time::ns(450)};
  /// Latency of one leaf <-> spine hop; its bandwidth follows from the oversubscription.
  Time spine_latency = Time::ns(450);
  /// Per-message software overhead paid once by every flow, on top of the links' latencies.
  Time software_overhead = Time::ns(1900);

  FabricKind fabric = FabricKind::RailOptimized;
  /// Rail-optimized: nodes whose NIC k share leaf k of their group; 0 = all nodes in one group.
  /// Fat tree: nodes whose NICs all sit on one leaf.
  int nodes_per_leaf = 0;
  /// Spine switches; each leaf has one up- and one down-link to each. 1 = one trunk (ideal
  /// adaptive routing); more = ECMP, a flow hashed onto one spine by (source, destination).
  int spines = 1;
  /// Leaf down-link capacity over up-link capacity (1 = non-blocking).
  double oversubscription = 1.0;
  CrossRail cross_rail = CrossRail::NvLink;
  /// What-ifs off the healthy cluster, in the order the experiment lists them.
  std::vector<Perturbation> perturbations;

  /// nodes x gpus_per_node, for a spec that passed check_spec (which holds the product to an
  /// int; before it, multiply in 64 bits).
  int gpu_count() const { return nodes * gpus_per_node; }
};

}  // namespace hopsim::topo
