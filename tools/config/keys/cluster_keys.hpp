// The keys of a cluster file: its size, its GPU model, its two kinds of link and its fabric
// (NCCL's and DeepEP's constants: nccl_keys.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "tools/config/key.hpp"

namespace hopsim::config::keys::cluster {

// Ranges of single keys; what their products may be is topo::check_spec's.
inline constexpr std::int64_t kMaxNodes = 1'000'000;
inline constexpr std::int64_t kMaxSms = 100'000;
/// A latency; at most 1 s (no hop, link or collective start takes that long), so that a step's
/// sums of hundreds of thousands of them stay within simulated time (at 2^31 us a hop, a
/// training step overflowed it).
inline constexpr double kMaxLatencyUs = 1e6;
inline constexpr std::array<std::string_view, 2> kBandwidthNames{"achievable", "peak"};

/// A latency in microseconds, in [0, kMaxLatencyUs]; required unless it has a default.
constexpr NumberKey latency_us(std::string_view name, std::string_view doc,
                               std::optional<double> value = std::nullopt) {
  return {.name = name,
          .sign = Sign::NonNegative,
          .hi = kMaxLatencyUs,
          .unit = Unit::Microseconds,
          .value = value,
          .fallback = value ? std::string_view() : kRequired,
          .doc = doc};
}

/// A share of a rate or a peak that a kernel or a transfer reaches, in [0.01, 1]; required
/// unless it has a default.
constexpr NumberKey share(std::string_view name, std::string_view doc,
                          std::optional<double> value = std::nullopt) {
  return {.name = name,
          .lo = 0.01,
          .hi = 1,
          .value = value,
          .fallback = value ? std::string_view() : kRequired,
          .doc = doc};
}

inline constexpr StringKey kName{
    .name = "name", .fallback = kRequired, .doc = "names the cluster in reports"};

inline constexpr StringKey kDescription{
    .name = "description", .fallback = "none", .doc = "free text"};

inline constexpr IntegerKey kNodes{.name = "nodes",
                                   .lo = 1,
                                   .hi = kMaxNodes,
                                   .fallback = kRequired,
                                   .doc = "nodes; nodes x gpus_per_node <= 2^24"};

inline constexpr IntegerKey kGpusPerNode{.name = "gpus_per_node",
                                         .lo = 1,
                                         .hi = 1024,
                                         .value = 8,
                                         .doc = "GPUs on one NVLink switch fabric, one NIC each: "
                                                "a server's NVSwitch (8), or a rack's NVLink "
                                                "domain (72 on an NVL72)"};

inline constexpr ValueKey kGpu{.name = "gpu",
                               .type = "object",
                               .fallback = kRequired,
                               .doc = "the GPU model's datasheet figures"};

inline constexpr ValueKey kNvlink{.name = "nvlink",
                                  .type = "object",
                                  .fallback = kRequired,
                                  .doc = "GPU <-> NVSwitch link, per GPU and direction"};

inline constexpr ValueKey kNic{.name = "nic",
                               .type = "object",
                               .fallback = kRequired,
                               .doc = "NIC <-> leaf link, per GPU and direction"};

inline constexpr ValueKey kFabric{
    .name = "fabric", .type = "object", .fallback = kRequired, .doc = "the InfiniBand fabric"};

inline constexpr NumberKey kSoftwareOverheadUs =
    cluster::latency_us("software_overhead_us", "paid once by every flow", 1.9);

inline constexpr ChoiceKey kBandwidth{.name = "bandwidth",
                                      .choices = kBandwidthNames,
                                      .value = "achievable",
                                      .doc = "which figure links carry"};

inline constexpr ValueKey kNccl{.name = "nccl",
                                .type = "object",
                                .fallback = "NCCL 2.19+'s constants, no NVLS",
                                .doc = "NCCL's cost model for collectives"};

inline constexpr ValueKey kDeepep{.name = "deepep",
                                  .type = "object",
                                  .fallback = "the links' full rate",
                                  .doc = "what DeepEP's kernels reach on this cluster"};

inline constexpr ValueKey kSources{.name = "sources",
                                   .type = "object",
                                   .fallback = "none",
                                   .doc = "JSON pointer -> citation, for every number of the file"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kName, &kDescription, &kNodes, &kGpusPerNode, &kGpu, &kNvlink, &kNic, &kFabric,
     &kSoftwareOverheadUs, &kBandwidth, &kNccl, &kDeepep, &kSources});
inline constexpr Section kSection{"cluster", "/", "a cluster (configs/clusters/*.json)", kKeys};

}  // namespace hopsim::config::keys::cluster

namespace hopsim::config::keys::gpu {

inline constexpr StringKey kName{
    .name = "name",
    .fallback = kRequired,
    .doc = "e.g. \"H100 SXM\"; calibration tables must name its model"};

inline constexpr NumberKey kPeakBf16Tflops{.name = "peak_bf16_tflops",
                                           .sign = Sign::Positive,
                                           .unit = Unit::Tflops,
                                           .fallback = kRequired,
                                           .doc = "dense BF16 peak"};

inline constexpr NumberKey kPeakFp8Tflops{.name = "peak_fp8_tflops",
                                          .sign = Sign::Positive,
                                          .unit = Unit::Tflops,
                                          .fallback = kRequired,
                                          .doc = "dense FP8 peak"};

inline constexpr NumberKey kPeakFp4Tflops{
    .name = "peak_fp4_tflops",
    .sign = Sign::Positive,
    .unit = Unit::Tflops,
    .fallback = "none",
    .doc = "dense NVFP4 peak, on GPUs with FP4 tensor cores (Blackwell): the nvfp4 recipe's "
           "GEMMs run at it, and \"calibration\": \"auto\" weighs it when it picks the "
           "nearest table to scale"};

inline constexpr NumberKey kHbmGB{
    .name = "hbm_GB",
    .sign = Sign::Positive,
    .unit = Unit::GB,
    .fallback = kRequired,
    .doc =
        "HBM a process can allocate: the CUDA runtime's total (85.03 for an \"80 "
        "GB\" H100, whose nvidia-smi shows 81,559 MiB), not the marketed size"};

inline constexpr NumberKey kHbmGBps{
    .name = "hbm_GBps",
    .lo = 1,  // below 1 GB/s no kernel of a real layer finishes within simulated time
    .unit = Unit::GBps,
    .fallback = kRequired,
    .doc = "HBM bandwidth"};

inline constexpr IntegerKey kSms{.name = "sms",
                                 .lo = 1,
                                 .hi = cluster::kMaxSms,
                                 .fallback = kRequired,
                                 .doc = "streaming multiprocessors"};

inline constexpr NumberKey kGemmEfficiency = cluster::share(
    "gemm_efficiency",
    "the GPU's GEMM share of peak by its ratio to 0.7, H100 SXM's: scales the roofline's "
    "efficiency by shape (cuBLAS's published H100 8192^3 rate, lower by the output tiles' "
    "waves over the SMs; docs/compute-model.md#roofline) and the GEMMs of a calibration table "
    "scaled to this GPU from another",
    0.7);

inline constexpr NumberKey kAttentionEfficiency = cluster::share(
    "attention_efficiency", "roofline fallback: achieved over peak for attention kernels", 0.6);

inline constexpr NumberKey kFp8WgradRatio = cluster::share(
    "fp8_wgrad_ratio",
    "an FP8 weight-gradient GEMM's throughput over the forward GEMM's of the same FLOPs", 0.68);

inline constexpr NumberKey kNvfp4GemmRatio{
    .name = "nvfp4_gemm_ratio",
    .lo = 0.01,
    .hi = 1,
    .fallback = "none",
    .doc = "required with peak_fp4_tflops: the share of the FP4 peak an NVFP4 GEMM reaches over "
           "the share of the FP8 peak the FP8 GEMM of its shape reaches (1: the same share; "
           "docs/compute-model.md#nvfp4)"};

inline constexpr NumberKey kMemoryEfficiency =
    cluster::share("memory_efficiency",
                   "achieved over HBM bandwidth for memory-bound kernels (norms, casts, SwiGLU, "
                   "permutes)",
                   0.8);

inline constexpr NumberKey kContextGB{
    .name = "context_GB",
    .lo = 0,
    .hi_key = "hbm_GB",
    .unit = Unit::GB,
    .value = 0.4,
    .doc = "memory the CUDA context holds in a training process (lazy module loading)"};

inline constexpr NumberKey kHostGBps{
    .name = "host_GBps",
    .lo = 0.1,
    .hi = 1e4,
    .unit = Unit::GBps,
    .value = 55.6,
    .doc = "what copies between GPU and host memory reach per direction (activation offload)"};

inline constexpr NumberKey kCommunicatorGB{
    .name = "communicator_GB",
    .lo = 0,
    .hi_key = "hbm_GB",
    .unit = Unit::GB,
    .value = 0.69,
    .doc = "memory each NCCL communicator a training process uses holds (its channels' buffers)"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kName, &kPeakBf16Tflops, &kPeakFp8Tflops, &kPeakFp4Tflops, &kHbmGB,
                           &kHbmGBps, &kSms, &kGemmEfficiency, &kAttentionEfficiency,
                           &kFp8WgradRatio, &kNvfp4GemmRatio, &kMemoryEfficiency, &kContextGB,
                           &kHostGBps, &kCommunicatorGB});
inline constexpr Section kSection{"cluster", "/gpu", "the GPU model", kKeys};

}  // namespace hopsim::config::keys::gpu

namespace hopsim::config::keys::link {

inline constexpr NumberKey kPeakGBps{.name = "peak_GBps",
                                     .sign = Sign::Positive,
                                     .unit = Unit::GBps,
                                     .fallback = kRequired,
                                     .doc = "datasheet line rate, per direction"};

inline constexpr NumberKey kAchievableGBps{.name = "achievable_GBps",
                                           .sign = Sign::Positive,
                                           .also = "at most peak_GBps",
                                           .unit = Unit::GBps,
                                           .fallback = "peak_GBps",
                                           .doc = "what transfers reach"};

inline constexpr NumberKey kLatencyUs = cluster::latency_us("latency_us", "per hop");

inline constexpr auto kKeys = std::to_array<KeyRef>({&kPeakGBps, &kAchievableGBps, &kLatencyUs});
inline constexpr Section kSection{"cluster", "/nvlink, /nic", "one kind of link", kKeys};

}  // namespace hopsim::config::keys::link

namespace hopsim::config::keys::fabric {

/// In topo::FabricKind's order.
inline constexpr std::array<std::string_view, 2> kKindNames{"rail_optimized", "fat_tree"};
inline constexpr std::array<std::string_view, 2> kCrossRailNames{"nvlink", "spine"};

inline constexpr ChoiceKey kKind{
    .name = "kind",
    .choices = kKindNames,
    .fallback = kRequired,
    .doc = "NIC k of each node on rail leaf k, or all of a node's NICs on one leaf"};

inline constexpr IntegerKey kNodesPerLeaf{.name = "nodes_per_leaf",
                                          .lo = 0,
                                          .hi = cluster::kMaxNodes,
                                          .value = 0,
                                          .fallback = "one group",
                                          .doc = "nodes per leaf group; must divide nodes"};

inline constexpr IntegerKey kSpines{.name = "spines",
                                    .lo = 1,
                                    .hi = 65'536,
                                    .value = 1,
                                    .doc = "1: one trunk (ideal adaptive routing); more: ECMP"};

inline constexpr NumberKey kOversubscription{
    .name = "oversubscription", .lo = 1, .value = 1, .doc = "leaf down-link over up-link capacity"};

inline constexpr NumberKey kSpineLatencyUs =
    cluster::latency_us("spine_latency_us", "a leaf <-> spine hop", 0.45);

inline constexpr ChoiceKey kCrossRail{
    .name = "cross_rail",
    .choices = kCrossRailNames,
    .value = "nvlink",
    .doc = "cross-rail traffic goes over NVLink first (PXN) or through the spine"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kKind, &kNodesPerLeaf, &kSpines, &kOversubscription, &kSpineLatencyUs, &kCrossRail});
inline constexpr Section kSection{"cluster", "/fabric", "the InfiniBand fabric", kKeys};

}  // namespace hopsim::config::keys::fabric
