// The keys of a perturbation: the GPUs, nodes, rails or spine links it applies to, and what
// changes there.
#pragma once

#include <array>
#include <string_view>

#include "tools/config/key.hpp"

namespace hopsim::config::keys::perturbation {

inline constexpr std::array<std::string_view, 3> kLinkNames{"nvlink", "nic", "spine"};

inline constexpr ValueKey kGpus{
    .name = "gpus",
    .type = "array of GPU ranks",
    .fallback = "one of gpus, nodes, rails unless stragglers or spine links",
    .doc = "the GPUs it applies to, each in the cluster"};

inline constexpr ValueKey kNodes{.name = "nodes",
                                 .type = "array of node indices",
                                 .fallback = "none",
                                 .doc = "instead of gpus: every GPU of these nodes"};

inline constexpr ValueKey kRails{
    .name = "rails",
    .type = "array of local GPU indices",
    .fallback = "none",
    .doc =
        "instead of gpus: the GPU of this index on every node (its rail's NICs, with links "
        "nic)"};

inline constexpr NumberKey kStragglers{
    .name = "stragglers",
    .lo = 1e-6,
    .hi = 1,
    .fallback = "none",
    .doc =
        "instead of gpus: this share of the GPUs the workload runs on (at least one), drawn "
        "with the experiment's seed, each at a compute_speed drawn uniformly from its [min, "
        "max]"};

inline constexpr ChoiceKey kLinks{
    .name = "links",
    .choices = kLinkNames,
    .fallback = "none (their compute)",
    .doc =
        "which of their links it changes, both directions; without it, their compute; "
        "\"spine\": the links between leaves and spines, named by leaves and spines"};

inline constexpr ValueKey kLeaves{
    .name = "leaves",
    .type = "array of leaf indices",
    .fallback = "every leaf",
    .doc = "with links spine: the leaves whose links to the spines change"};

inline constexpr ValueKey kSpines{
    .name = "spines",
    .type = "array of spine indices",
    .fallback = "every spine",
    .doc = "with links spine: the spines whose links to the leaves change"};

inline constexpr NumberKey kComputeSpeed{
    .name = "compute_speed",
    .lo = 0.1,
    .hi = 10,
    .also = "with stragglers [min, max], each in that range",
    .value = 1,
    .doc =
        "their kernels at this share of the compute model's rate (0.95: 5% slow); without "
        "links"};

inline constexpr NumberKey kKernelSpeed{
    .name = "kernel_speed",
    .lo = 0.1,
    .hi = 10,
    .shape = Shape::Pair,
    .fallback = "none",
    .doc =
        "without links: each of their kernels also at its own share of the rate, drawn "
        "uniformly from [min, max] with the experiment's seed (jitter); a folded step takes "
        "each kernel at the range's harmonic mean"};

inline constexpr NumberKey kBandwidth{
    .name = "bandwidth",
    .lo = 0.01,
    .hi = 10,
    .value = 1,
    .doc =
        "their links at this share of their rate (0.5: a NIC trained down to half); with "
        "links"};

inline constexpr NumberKey kExtraLatencyUs{
    .name = "extra_latency_us",
    .lo = 0,
    .hi = 1e6,
    .unit = Unit::Microseconds,
    .value = 0,
    .doc = "what every flow on their links pays more; with links"};

inline constexpr ValueKey kGpu{
    .name = "gpu",
    .type = "cluster preset or file",
    .fallback = "none",
    .doc =
        "with nodes only: their GPUs are that cluster's GPU model (a mixed cluster); their "
        "kernels run at that model's rate over the cluster GPU's, per kernel class, each "
        "model's priced by its own calibration over the workload's kernels"};

inline constexpr ValueKey kCalibration{
    .name = "calibration",
    .type = "\"auto\", \"none\" or a calibration file",
    .fallback = "the experiment's way",
    .doc =
        "with gpu: the table the nodes' GPU model is priced by (\"auto\" unless the "
        "experiment has no calibration)"};

inline constexpr BooleanKey kFailed{
    .name = "failed",
    .value = false,
    .doc =
        "with links: they carry nothing, and traffic detours (a failed NIC's over NVLink "
        "through the next GPU's NIC, a failed NVLink's through the NICs, ECMP over the spines"
        " left); a partition is an error"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kGpus, &kNodes, &kRails, &kStragglers, &kLinks, &kLeaves, &kSpines, &kComputeSpeed,
     &kKernelSpeed, &kBandwidth, &kExtraLatencyUs, &kGpu, &kCalibration, &kFailed});
inline constexpr Section kSection{
    "experiment", "/perturbations/N",
    "a what-if on some GPUs or spine links: slower compute, degraded or failed links", kKeys};

}  // namespace hopsim::config::keys::perturbation
