// The relative error of a prediction against its published figure, and what sets a run apart
// from the experiment that figure measured.
#include "tools/commands/validation_figures.hpp"

#include <algorithm>

namespace hopsim::tools {

// The prediction and its error relative to the published figure.
ValidationFigures validation_figures(const work::Validation& v, double predicted) {
  return {v, predicted, (predicted - v.published) / v.published};
}

namespace {

// Whether an override key sets the cluster's perturbations (all of them or one entry's field).
bool perturbs(const std::string& key) {
  return key == "perturbations" || key.starts_with("perturbations.");
}

}  // namespace

// The perturbations, then the overrides that changed something, in the order applied. An
// override of the perturbations that leaves the cluster healthy is none: the run is what the
// published figure measured.
std::vector<WhatIf> what_ifs(const config::ExperimentFile& file) {
  const bool perturbed = !file.experiment.cluster.perturbations.empty();
  std::vector<WhatIf> out;
  if (perturbed && std::ranges::none_of(file.changes, [](const config::OverrideChange& c) {
        return perturbs(c.key);
      })) {
    out.push_back({"perturbations", true});
  }
  for (const config::OverrideChange& c : file.changes) {
    const bool perturbation = perturbs(c.key);
    if (c.before != c.after && c.key != "workload.fold" && (perturbed || !perturbation)) {
      out.push_back({c.text, perturbation});
    }
  }
  return out;
}

std::vector<std::string> what_if_texts(const std::vector<WhatIf>& w) {
  std::vector<std::string> out;
  out.reserve(w.size());
  for (const WhatIf& x : w) {
    out.push_back(x.text);
  }
  return out;
}

}  // namespace hopsim::tools
