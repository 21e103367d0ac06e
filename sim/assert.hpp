// HOPSIM_ASSERT: an always-on invariant check that says what went wrong.
#pragma once

#include <string>

#include <fmt/format.h>

namespace hopsim {

[[noreturn]] void assert_failed(const char* cond, const char* file, int line, const std::string& msg);

}  // namespace hopsim

#define HOPSIM_ASSERT(cond, ...)                                                        \
  do {                                                                                  \
    if (!(cond)) [[unlikely]] {                                                         \
      ::hopsim::assert_failed(#cond, __FILE__, __LINE__, ::fmt::format(__VA_ARGS__));   \
    }                                                                                   \
  } while (false)
