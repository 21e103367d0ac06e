// A published figure beside what the run predicts of it.
#pragma once

#include <string>
#include <vector>

#include "tools/config/experiment_file.hpp"
#include "workloads/experiment/experiment.hpp"

namespace hopsim::tools {

/// The experiment's validation and the run's prediction of its metric.
struct ValidationFigures {
  work::Validation validation;  ///< the metric, its row (collectives), the figure, its source
  double predicted = 0;
  double error = 0;  ///< (predicted - published) / published
};

/// `predicted` against `v`'s published figure.
ValidationFigures validation_figures(const work::Validation& v, double predicted);

/// One thing that sets a run apart from the experiment its published figure measured.
struct WhatIf {
  std::string text;           ///< "perturbations", or the --set/--unset as typed
  bool perturbation = false;  ///< a perturbation of the cluster (the file's or a --set of them)
};

/// What sets the run apart from the experiment its published figure measured: "perturbations"
/// when the cluster is perturbed, then each --set or --unset that changed a value, as typed
/// (`workload.fold` excepted: folding changes how a step is simulated, not what it predicts;
/// so is an override of the perturbations that leaves the cluster healthy). Empty: the
/// published figure validates the run.
std::vector<WhatIf> what_ifs(const config::ExperimentFile& file);

/// Each what-if's text, in order.
std::vector<std::string> what_if_texts(const std::vector<WhatIf>& w);

}  // namespace hopsim::tools
