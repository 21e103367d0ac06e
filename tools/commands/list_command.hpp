// `hopsim list`: the presets an experiment can name (clusters, models, calibration tables) and
// the shipped experiments, with the files they are read from.
#pragma once

namespace hopsim::tools {

/// Prints every preset by kind (name, file; the first of the preset folders wins) and the
/// experiments beside them. Returns 0; 1 when no preset folder is found.
int list_command();

}  // namespace hopsim::tools
