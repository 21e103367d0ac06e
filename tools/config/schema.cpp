// The sections of the reference, in order, and their key tables.
#include "tools/config/schema.hpp"

#include "sim/assert.hpp"
#include "tools/config/schema_tables.hpp"

namespace hopsim::config {
namespace {

using namespace tables;

const std::array<SectionDoc, 42> kSections{{
    {Section::Experiment, "experiment", "/", "an experiment (configs/experiments/*.json)",
     kExperiment},
    {Section::Parallel, "experiment", "/parallel", "the rank mesh", kParallel},
    {Section::Validation, "experiment", "/validation", "a published figure to compare with",
     kValidation},
    {Section::Solver, "experiment", "/solver", "the flow solver", kSolver},
    {Section::Perturbation, "experiment", "/perturbations/N",
     "a what-if on some GPUs or spine links: slower compute, degraded or failed links",
     kPerturbation},
    {Section::FlowsWorkload, "experiment", "/workload (kind flows)", "explicit flows",
     kFlowsWorkload},
    {Section::Flow, "experiment", "/workload/flows/N", "one flow", kFlow},
    {Section::CollectiveWorkload, "experiment", "/workload (kind collective)",
     "one collective over one or several sizes", kCollectiveWorkload},
    {Section::SizeRange, "experiment", "/workload/bytes (an object)",
     "sizes min, min x factor, ... up to max (nccl-tests -b -e -f)", kSizeRange},
    {Section::CollectiveMoe, "experiment", "/workload/moe", "MoE token routing for all_to_all",
     kCollectiveMoe},
    {Section::AttentionLayerWorkload, "experiment", "/workload (kind attention_layer)",
     "an attention layer under context parallelism", kAttentionLayerWorkload},
    {Section::AttentionCp, "experiment", "/workload/cp (kind attention_layer)",
     "the context-parallel algorithm", kAttentionCp},
    {Section::MoeLayerWorkload, "experiment", "/workload (kind moe_layer)",
     "a MoE layer under expert parallelism", kMoeLayerWorkload},
    {Section::MoeRoutingSection, "experiment", "/workload/routing (kind moe_layer)",
     "how popular the experts are", kMoeRouting},
    {Section::TransformerLayerWorkload, "experiment", "/workload (kind transformer_layer)",
     "transformer layers: attention under CP, then a dense MLP or a MoE under EP",
     kTransformerLayerWorkload},
    {Section::TransformerMoe, "experiment", "/workload/moe (kind transformer_layer)",
     "the MoE part's routing and exchanges (its routing object as for moe_layer)",
     kTransformerMoe},
    {Section::TrainingStepWorkload, "experiment", "/workload (kind training_step)",
     "a whole training step: every layer, the pipeline schedule, DP gradients, the optimizer",
     kTrainingStepWorkload},
    {Section::ChakraWorkload, "experiment", "/workload (kind chakra)",
     "a Chakra execution trace replayed (one file per rank; docs/traces.md)", kChakraWorkload},
    {Section::ChakraAlgorithms, "experiment", "/workload/algorithms (kind chakra)",
     "the algorithm each collective op of the trace runs with", kChakraAlgorithms},
    {Section::Cluster, "cluster", "/", "a cluster (configs/clusters/*.json)", kCluster},
    {Section::Gpu, "cluster", "/gpu", "the GPU model", kGpu},
    {Section::Link, "cluster", "/nvlink, /nic", "one kind of link", kLink},
    {Section::Fabric, "cluster", "/fabric", "the InfiniBand fabric", kFabric},
    {Section::Nccl, "cluster", "/nccl", "NCCL's cost-model constants", kNccl},
    {Section::NcclAlgorithm, "cluster", "/nccl/ring, /nccl/tree", "latencies by protocol",
     kNcclAlgorithm},
    {Section::NcclLatency, "cluster", "/nccl/ring/simple, ...", "one algorithm and protocol",
     kNcclLatency},
    {Section::Nvls, "cluster", "/nccl/nvls", "NVLS (NVSwitch reduction)", kNvls},
    {Section::DeepEp, "cluster", "/deepep", "DeepEP's kernels", kDeepEp},
    {Section::Model, "model", "/", "a model (configs/models/*.json)", kModel},
    {Section::Mla, "model", "/mla", "multi-head latent attention", kMla},
    {Section::ModelMoe, "model", "/moe", "mixture of experts", kModelMoe},
    {Section::Calibration, "calibration", "/",
     "a calibration table file (configs/calibration/*.json)", kCalibration},
    {Section::CalibrationDevice, "calibration", "/device", "the measured GPU",
     kCalibrationDevice},
    {Section::CalibrationCeilings, "calibration", "/device/ceilings", "measured ceilings",
     kCalibrationCeilings},
    {Section::CalibrationTable, "calibration", "/tables/N", "one table", kCalibrationTable},
    {Section::CalibrationAxis, "calibration", "/tables/N/axes/M", "one axis", kCalibrationAxis},
    {Section::GemmKey, "calibration", "/tables/N/key (op gemm)", "GEMM key", kGemmKey},
    {Section::GroupedGemmKey, "calibration", "/tables/N/key (op grouped_gemm)",
     "grouped GEMM key", kGroupedGemmKey},
    {Section::AttentionKey, "calibration", "/tables/N/key (op attn)", "attention key",
     kAttentionKey},
    {Section::MemoryKey, "calibration", "/tables/N/key (op memory)", "memory-bound kernel key",
     kMemoryKey},
    {Section::KernelRules, "kernel rules", "/",
     "how hopsim profile-check classifies a trace's kernels (configs/profile/*.json)",
     kKernelRules},
    {Section::KernelRule, "kernel rules", "/rules/N", "one rule; the first that matches wins",
     kKernelRule},
}};

}  // namespace

std::span<const SectionDoc> schema() { return kSections; }

std::span<const KeyDoc> keys_of(Section section) {
  for (const SectionDoc& s : kSections) {
    if (s.section == section) {
      return s.keys;
    }
  }
  HOPSIM_ASSERT(false, "section {} has no keys", static_cast<int>(section));
  return {};
}

}  // namespace hopsim::config
