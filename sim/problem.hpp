// A problem a model finds with its own input: where it is (a JSON pointer) and what is wrong.
#pragma once

#include <string>
#include <vector>

namespace hopsim {

/// Models check themselves and return problems instead of asserting: the config layer turns
/// them into "file: /pointer: message" errors, a sweep into rows marked invalid.
struct Problem {
  std::string path;  ///< a JSON pointer into the experiment, e.g. "/parallel/tp"
  std::string message;
};

using Problems = std::vector<Problem>;

}  // namespace hopsim
