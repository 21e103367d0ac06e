// The relative error of a prediction against its published figure.
#include "tools/commands/validation_figures.hpp"

#include <algorithm>

namespace hopsim::tools {

// The prediction and its error relative to the published figure.
ValidationFigures validation_figures(const work::Validation& v, double predicted) {
  return {v, predicted, (predicted - v.published) / v.published};
}

}  // namespace hopsim::tools

namespace hopsim::tools {

// The perturbations, then the overrides that changed something, in the order applied.
std::vector<std::string> what_ifs(const config::ExperimentFile& file) {
  std::vector<std::string> out;
  if (!file.experiment.cluster.perturbations.empty() &&
      std::ranges::none_of(file.changes, [](const config::OverrideChange& c) {
        return c.key == "perturbations";
      })) {
    out.emplace_back("perturbations");
  }
  for (const config::OverrideChange& c : file.changes) {
    if (c.before != c.after && c.key != "workload.fold") {
      out.push_back(c.text);
    }
  }
  return out;
}

}  // namespace hopsim::tools
