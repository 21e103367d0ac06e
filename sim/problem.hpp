// A problem a model finds with its own input: where it is (a JSON pointer) and what is wrong.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hopsim {

/// Models check themselves and return problems instead of asserting: the config layer turns
/// them into "file: /pointer: message" errors, a sweep into rows marked invalid.
struct Problem {
  std::string path;  ///< a JSON pointer into the experiment, e.g. "/parallel/tp"
  std::string message;
};

using Problems = std::vector<Problem>;

/// A quantity derived while a plan is built (a kernel's time from the HBM bandwidth or a
/// calibration table, ...) that would leave what can be simulated. Thrown where it is computed,
/// before it becomes a Time, naming the input that drives it; run() reports it as a Problem.
class LimitError : public std::runtime_error {
 public:
  LimitError(std::string path, const std::string& message)
      : std::runtime_error(message), path_(std::move(path)) {}
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace hopsim
