// run_measurement for builds without CUDA: explains how to get a measuring build.
#include <cstdio>

#include <fmt/format.h>

#include "calibrate/core/run_options.hpp"

namespace hopsim::calib {

int run_measurement(const RunOptions& /*options*/) {
  fmt::print(stderr,
             "hopsim-calibrate: measuring needs a CUDA build (cmake --preset cuda, i.e. "
             "-DHOPSIM_CUDA=ON); this build supports only --dry-run and --merge\n");
  return 2;
}

}  // namespace hopsim::calib
