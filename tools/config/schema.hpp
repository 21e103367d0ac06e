// Every key the config parser accepts, with its type, default and meaning: the parser's
// allow-lists are these tables, so the reference (hopsim schema, docs/reference.md) cannot
// drift from what is parsed.
#pragma once

#include <span>
#include <string_view>

namespace hopsim::config {

struct KeyDoc {
  std::string_view name;
  std::string_view type;     ///< "integer >= 1", "number > 0", "string", "object", ...
  std::string_view fallback; ///< the default, or "required"
  std::string_view doc;      ///< what it means, with its unit
};

/// One object of a config file whose keys the parser checks.
enum class Section {
  Experiment, Parallel, Validation, Solver, Perturbation, FlowsWorkload, Flow, CollectiveWorkload,
  SizeRange, CollectiveMoe, AttentionLayerWorkload, AttentionCp, MoeLayerWorkload,
  MoeRoutingSection, TransformerLayerWorkload, TransformerMoe, TrainingStepWorkload,
  ChakraWorkload, ChakraAlgorithms,
  Cluster, Gpu, Link, Fabric, Nccl, NcclAlgorithm, NcclLatency, Nvls, DeepEp,
  Model, Mla, ModelMoe,
  Calibration, CalibrationDevice, CalibrationCeilings, CalibrationTable, CalibrationAxis,
  GemmKey, GroupedGemmKey, AttentionKey, MemoryKey,
  KernelRules, KernelRule,
};

struct SectionDoc {
  Section section;
  std::string_view file;  ///< "experiment", "cluster", "model", "calibration" or "kernel rules"
  std::string_view path;  ///< where in that file, e.g. "/workload (kind collective)"
  std::string_view doc;
  std::span<const KeyDoc> keys;
};

/// The keys of `section`, in the order the reference lists them.
std::span<const KeyDoc> keys_of(Section section);

/// Every section, in reference order.
std::span<const SectionDoc> schema();

}  // namespace hopsim::config
