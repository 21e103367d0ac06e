// The relative error of a prediction against its published figure.
#include "tools/commands/validation_figures.hpp"

namespace hopsim::tools {

// The prediction and its error relative to the published figure.
ValidationFigures validation_figures(const work::Validation& v, double predicted) {
  return {v, predicted, (predicted - v.published) / v.published};
}

}  // namespace hopsim::tools
