// `hopsim list`: the presets an experiment can name (clusters, models, calibration tables) and
// the shipped experiments, with the files they are read from.
#pragma once

#include "tools/commands/command.hpp"

namespace hopsim::tools {

/// Prints every preset by kind (name, file; the first of the preset folders wins) and the
/// experiments beside them. Returns 0; 1 when no preset folder is found.
int list_command();

/// `hopsim list`: its (no) options, and list_command.
Command declare_list_command(CLI::App& program);

}  // namespace hopsim::tools
