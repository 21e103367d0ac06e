#include "tools/profile/linear_regex.hpp"

#include <stdexcept>
#include <string>

#include <re2/re2.h>

namespace hopsim::profile {

LinearRegex::LinearRegex(std::string_view pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // the error goes to the caller, not to stderr
  auto compiled = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()),
                                              options);
  if (!compiled->ok()) {
    throw std::invalid_argument(compiled->error());
  }
  compiled_ = std::move(compiled);
}

bool LinearRegex::search(std::string_view text) const {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *compiled_);
}

}  // namespace hopsim::profile
