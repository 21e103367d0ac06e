// Every workload kind as one variant of per-kind jobs, and the kind names in one table.
//
// A job type J has: `static constexpr std::string_view kKind` (its name in configs and
// reports), `static constexpr bool kSimulated`, `void check(const JobEnv&, Problems&) const`,
// and, when simulated, `std::vector<Case> cases(const BuildEnv&) const`. Adding a kind means
// one job here, one parser (tools/config) and one report section (tools/commands); std::visit
// over Job makes the compiler point at each place a new kind is missing.
#pragma once

#include <array>
#include <string_view>
#include <variant>

#include "workloads/jobs/collective_job.hpp"
#include "workloads/jobs/flows_job.hpp"
#include "workloads/cp/attention_layer_job.hpp"
#include "workloads/ep/moe_layer_job.hpp"
#include "workloads/step/training_step_job.hpp"
#include "workloads/layer/transformer_layer_job.hpp"
#include "workloads/trace/chakra_job.hpp"

namespace hopsim::work {

using Job = std::variant<FlowsJob, CollectiveJob, AttentionLayerJob, MoeLayerJob,
                         TransformerLayerJob, TrainingStepJob, ChakraJob>;

namespace detail {
template <class V>
struct KindTable;
template <class... J>
struct KindTable<std::variant<J...>> {
  static constexpr std::array<std::string_view, sizeof...(J)> kNames{J::kKind...};
  static constexpr std::array<bool, sizeof...(J)> kSimulated{J::kSimulated...};
};
}  // namespace detail

/// Kind names in variant order: "flows", "collective", "attention_layer", "moe_layer",
/// "transformer_layer", "training_step", "chakra".
inline constexpr auto kJobKinds = detail::KindTable<Job>::kNames;

inline std::string_view kind_name(const Job& job) { return kJobKinds[job.index()]; }
inline bool is_simulated(const Job& job) { return detail::KindTable<Job>::kSimulated[job.index()]; }

/// Visitor helper: Overloaded{[](const FlowsJob&) {...}, [](const CollectiveJob&) {...}}.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace hopsim::work
