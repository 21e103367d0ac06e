// The program's version and the git revision it was built from.
#pragma once

#include <string>

namespace hopsim::tools {

/// "0.2.0 (git 1a2b3c4d5e)", "-dirty" when built from a tree with changes.
std::string version();

}  // namespace hopsim::tools
