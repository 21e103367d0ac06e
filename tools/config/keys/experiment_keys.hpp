// The keys of an experiment file's top level, its rank mesh, its validation figure and its flow
// solver.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tools/config/key.hpp"
#include "workloads/experiment/job.hpp"

namespace hopsim::config::keys::experiment {

inline constexpr StringKey kName{
    .name = "name", .fallback = "the file's name", .doc = "names the experiment in reports"};

inline constexpr StringKey kDescription{
    .name = "description", .fallback = "none", .doc = "free text"};

inline constexpr ValueKey kCluster{
    .name = "cluster",
    .type = "string or object",
    .fallback = kRequired,
    .doc =
        "a preset name (hopsim list), a cluster file (path relative to this file) or the "
        "cluster inline"};

inline constexpr ValueKey kModel{
    .name = "model",
    .type = "string or object",
    .fallback = "none",
    .doc = "a preset name, a model file or the model inline; needed by the layer kinds"};

// Read as a string; "none" and "auto" are words, anything else a preset or a file.
inline constexpr StringKey kCalibration{
    .name = "calibration",
    .fallback = "none (roofline only)",
    .doc =
        "a preset name or a calibration table file for the compute model; \"auto\": the "
        "shipped table for the cluster's GPU, else the nearest one scaled to it; \"none\": "
        "the roofline"};

inline constexpr ValueKey kParallel{.name = "parallel",
                                    .type = "object",
                                    .fallback = "all degrees 1",
                                    .doc = "the rank mesh: parallel degrees and their order"};

inline constexpr ValueKey kWorkload{
    .name = "workload",
    .type = "object",
    .fallback = kRequired,
    .doc = "what to simulate; \"kind\" picks one of the sections below"};

inline constexpr IntegerKey kSeed{
    .name = "seed",
    .lo = 0,
    .hi = INT64_MAX,
    .value = 1,
    .doc = "seeds every random draw (MoE routing); same seed, same report"};

inline constexpr ValueKey kValidation{
    .name = "validation",
    .type = "object",
    .fallback = "none",
    .doc = "a published figure the run is compared with (collective)"};

inline constexpr ValueKey kSolver{
    .name = "solver",
    .type = "object",
    .fallback = "exact",
    .doc = "the flow solver: exact max-min rates, or its approximate mode"};

inline constexpr ValueKey kPerturbations{
    .name = "perturbations",
    .type = "array of objects",
    .fallback = "none",
    .doc =
        "what-ifs off the healthy cluster: GPUs that compute slower, NVLink, NIC or spine "
        "links that carry less, take longer or fail (docs/what-ifs.md); a folded training "
        "step measures the layer groups and stages they touch"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kName, &kDescription, &kCluster, &kModel, &kCalibration, &kParallel,
                           &kWorkload, &kSeed, &kValidation, &kSolver, &kPerturbations});
inline constexpr Section kSection{"experiment", "/", "an experiment (configs/experiments/*.json)",
                                  kKeys};

}  // namespace hopsim::config::keys::experiment

namespace hopsim::config::keys::workload {

// The key that picks the workload's kind, and with it the section its other keys belong to
// (each kind's section declares its own value of it, for the reference).
inline constexpr ChoiceKey kKind{.name = "kind",
                                 .choices = work::kJobKinds,
                                 .fallback = kRequired,
                                 .doc = "the workload's kind"};

}  // namespace hopsim::config::keys::workload

namespace hopsim::config::keys::parallel {

inline constexpr std::int64_t kMaxDegree = std::int64_t{1} << 24;  // the most GPUs of a cluster
/// The mesh dimensions `order` names, in work::Dim's order.
inline constexpr std::array<std::string_view, 4> kDimNames{"tp", "cp", "pp", "dp"};

/// A parallel degree: 1 (none) unless given.
constexpr IntegerKey degree(std::string_view name, std::string_view doc) {
  return {.name = name, .lo = 1, .hi = kMaxDegree, .value = 1, .doc = doc};
}

inline constexpr IntegerKey kTp =
    degree("tp", "tensor-parallel degree; a TP group must fit in a node");

inline constexpr IntegerKey kCp = degree("cp", "context-parallel degree");

inline constexpr IntegerKey kPp = degree("pp", "pipeline-parallel degree");

inline constexpr IntegerKey kDp =
    degree("dp", "data-parallel degree; tp x cp x pp x dp must divide the GPUs");

inline constexpr IntegerKey kEp =
    degree("ep", "expert-parallel degree, taken from tp x cp x dp (which it must divide)");

inline constexpr ChoiceKey kOrder{.name = "order",
                                  .choices = kDimNames,
                                  .shape = Shape::List,
                                  .also = "each once",
                                  .fallback = "[\"tp\", \"cp\", \"pp\", \"dp\"]",
                                  .doc = "the mesh order, innermost (consecutive ranks) first"};

inline constexpr BooleanKey kTpAcrossNodes{
    .name = "tp_across_nodes", .value = false, .doc = "allow TP groups that span nodes"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kTp, &kCp, &kPp, &kDp, &kEp, &kOrder, &kTpAcrossNodes});
inline constexpr Section kSection{"experiment", "/parallel", "the rank mesh", kKeys};

}  // namespace hopsim::config::keys::parallel

namespace hopsim::config::keys::validation {

inline constexpr std::array<std::string_view, 6> kMetricNames{
    "busbw_GBps",          "time_s", "deepep_rdma_GBps", "deepep_nvl_GBps", "model_tflops_per_gpu",
    "tokens_per_s_per_gpu"};

inline constexpr ChoiceKey kMetric{
    .name = "metric",
    .choices = kMetricNames,
    .fallback = kRequired,
    .doc =
        "the collective row's value compared (DeepEP's: moe all-to-all); an attention, MoE or"
        " transformer layer's: time_s (the whole run); a training step's: "
        "model_tflops_per_gpu or tokens_per_s_per_gpu"};

inline constexpr IntegerKey kBytes{.name = "bytes",
                                   .lo = 1,
                                   .hi = INT64_MAX,
                                   .unit = Unit::Bytes,
                                   .fallback = "required for a collective",
                                   .doc = "the size (one of the workload's) whose row is compared"};

inline constexpr NumberKey kPublished{.name = "published",
                                      .sign = Sign::Positive,
                                      .fallback = kRequired,
                                      .doc = "the published figure, in the metric's unit"};

inline constexpr StringKey kSource{
    .name = "source", .fallback = kRequired, .doc = "where the published figure comes from"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kMetric, &kBytes, &kPublished, &kSource});
inline constexpr Section kSection{"experiment", "/validation", "a published figure to compare with",
                                  kKeys};

}  // namespace hopsim::config::keys::validation

namespace hopsim::config::keys::solver {

inline constexpr NumberKey kTolerance{
    .name = "tolerance",
    .lo = 0,
    .hi = 0.1,
    .value = 0,
    .fallback = "exact",
    .doc =
        "approximate mode: a flow may end when it is within this share of its size of its "
        "end, at the wake nearest its end, so that flows ending close together share one "
        "re-solve; the report's sim section says which mode ran (docs/network-model.md has "
        "its measured errors)"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kTolerance});
inline constexpr Section kSection{"experiment", "/solver", "the flow solver", kKeys};

}  // namespace hopsim::config::keys::solver
