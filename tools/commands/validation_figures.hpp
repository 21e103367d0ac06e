// A published figure beside what the run predicts of it.
#pragma once

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

}  // namespace hopsim::tools
