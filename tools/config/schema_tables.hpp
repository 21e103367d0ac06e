// The key tables behind schema.hpp, one per section (defined in schema_*.cpp).
#pragma once

#include <array>

#include "tools/config/schema.hpp"

namespace hopsim::config::tables {

extern const std::array<KeyDoc, 11> kExperiment;
extern const std::array<KeyDoc, 7> kParallel;
extern const std::array<KeyDoc, 4> kValidation;
extern const std::array<KeyDoc, 1> kSolver;
extern const std::array<KeyDoc, 14> kPerturbation;
extern const std::array<KeyDoc, 2> kFlowsWorkload;
extern const std::array<KeyDoc, 6> kFlow;
extern const std::array<KeyDoc, 13> kCollectiveWorkload;
extern const std::array<KeyDoc, 3> kSizeRange;
extern const std::array<KeyDoc, 11> kCollectiveMoe;
extern const std::array<KeyDoc, 17> kAttentionLayerWorkload;
extern const std::array<KeyDoc, 4> kAttentionCp;
extern const std::array<KeyDoc, 22> kMoeLayerWorkload;
extern const std::array<KeyDoc, 8> kMoeRouting;
extern const std::array<KeyDoc, 16> kTransformerLayerWorkload;
extern const std::array<KeyDoc, 12> kTransformerMoe;
extern const std::array<KeyDoc, 30> kTrainingStepWorkload;
extern const std::array<KeyDoc, 6> kChakraWorkload;
extern const std::array<KeyDoc, 4> kChakraAlgorithms;
extern const std::array<KeyDoc, 13> kCluster;
extern const std::array<KeyDoc, 13> kGpu;
extern const std::array<KeyDoc, 3> kLink;
extern const std::array<KeyDoc, 6> kFabric;
extern const std::array<KeyDoc, 5> kNccl;
extern const std::array<KeyDoc, 3> kNcclAlgorithm;
extern const std::array<KeyDoc, 3> kNcclLatency;
extern const std::array<KeyDoc, 3> kNvls;
extern const std::array<KeyDoc, 5> kDeepEp;
extern const std::array<KeyDoc, 14> kModel;
extern const std::array<KeyDoc, 5> kMla;
extern const std::array<KeyDoc, 6> kModelMoe;
extern const std::array<KeyDoc, 9> kCalibration;
extern const std::array<KeyDoc, 14> kCalibrationDevice;
extern const std::array<KeyDoc, 3> kCalibrationCeilings;
extern const std::array<KeyDoc, 10> kCalibrationTable;
extern const std::array<KeyDoc, 2> kCalibrationAxis;
extern const std::array<KeyDoc, 3> kGemmKey;
extern const std::array<KeyDoc, 5> kGroupedGemmKey;
extern const std::array<KeyDoc, 5> kAttentionKey;
extern const std::array<KeyDoc, 2> kMemoryKey;
extern const std::array<KeyDoc, 3> kKernelRules;
extern const std::array<KeyDoc, 3> kKernelRule;

}  // namespace hopsim::config::tables
