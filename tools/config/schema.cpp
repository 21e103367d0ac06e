// The sections of the reference, in order.
#include "tools/config/schema.hpp"

#include <array>

#include "tools/config/keys/calibration_keys.hpp"
#include "tools/config/keys/calibration_table_keys.hpp"
#include "tools/config/keys/chakra_keys.hpp"
#include "tools/config/keys/cluster_keys.hpp"
#include "tools/config/keys/collective_keys.hpp"
#include "tools/config/keys/ep_library_keys.hpp"
#include "tools/config/keys/experiment_keys.hpp"
#include "tools/config/keys/flows_keys.hpp"
#include "tools/config/keys/kernel_rule_keys.hpp"
#include "tools/config/keys/model_keys.hpp"
#include "tools/config/keys/nccl_keys.hpp"
#include "tools/config/keys/perturbation_keys.hpp"
#include "tools/config/keys/step_keys.hpp"
#include "tools/config/keys/suite_keys.hpp"
#include "tools/config/keys/transformer_keys.hpp"

namespace hopsim::config {
namespace {

using namespace keys;

constexpr auto kSections = std::to_array<const Section*>({
    &experiment::kSection,
    &parallel::kSection,
    &validation::kSection,
    &solver::kSection,
    &perturbation::kSection,
    &flows::kSection,
    &flow::kSection,
    &collective::kSection,
    &size_range::kSection,
    &collective_moe::kSection,
    &attention::kSection,
    &attention_cp::kSection,
    &moe_layer::kSection,
    &routing::kSection,
    &transformer::kSection,
    &transformer_moe::kSection,
    &step::kSection,
    &chakra::kSection,
    &chakra_algorithms::kSection,
    &cluster::kSection,
    &gpu::kSection,
    &link::kSection,
    &fabric::kSection,
    &nccl::kSection,
    &nccl_algorithm::kSection,
    &nccl_latency::kSection,
    &nvls::kSection,
    &deepep::kSection,
    &ep_library::kSection,
    &ep_library_gpu::kSection,
    &ep_library_path::kSection,
    &ep_library_cost::kIntranodeSection,
    &ep_library_cost::kInternodeSection,
    &model::kSection,
    &mla::kSection,
    &model_moe::kSection,
    &calibration::kSection,
    &device::kSection,
    &ceilings::kSection,
    &table::kSection,
    &axis::kSection,
    &gemm_key::kSection,
    &grouped_gemm_key::kSection,
    &attention_key::kSection,
    &memory_key::kSection,
    &kernel_rules::kSection,
    &kernel_rule::kSection,
    &suite::kSection,
});

}  // namespace

std::span<const Section* const> schema() {
  return kSections;
}

}  // namespace hopsim::config
