// Prints a failed invariant with its location, then aborts.
#include "sim/assert.hpp"

#include <cstdio>
#include <cstdlib>

namespace hopsim {

void assert_failed(const char* cond, const char* file, int line, const std::string& msg) {
  fmt::print(stderr, "{}:{}: internal error: {} ({})\n", file, line, msg, cond);
  std::fflush(stderr);
  std::abort();
}

}  // namespace hopsim
