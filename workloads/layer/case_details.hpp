// A case's report data for the layer kinds: an attention layer's (CP), a MoE layer's (EP), and a
// transformer layer's, which holds both. A Case carries its kind's data as it is (job_env.hpp:
// Case::details); the report's CP and EP sections read it back here, a transformer layer's parts
// counting as CP and EP data.
#pragma once

#include <any>
#include <optional>

#include "workloads/cp/cp_details.hpp"
#include "workloads/ep/ep_details.hpp"

namespace hopsim::work {

/// A transformer layer's report data: its attention under CP, and its MoE part's (MoE layers).
struct TransformerDetails {
  CpDetails cp;
  std::optional<EpDetails> ep;
};

/// The CP or EP data of a case's details, or null.
inline const CpDetails* cp_details(const std::any& d) {
  if (const auto* t = std::any_cast<TransformerDetails>(&d)) {
    return &t->cp;
  }
  return std::any_cast<CpDetails>(&d);
}

inline const EpDetails* ep_details(const std::any& d) {
  if (const auto* t = std::any_cast<TransformerDetails>(&d)) {
    return t->ep ? &*t->ep : nullptr;
  }
  return std::any_cast<EpDetails>(&d);
}

}  // namespace hopsim::work
