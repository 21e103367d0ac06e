// The memory-bound kernels' rows as a CUDA build compiles them (no GPU): each pass has its launch.
#include <doctest/doctest.h>

#include "calibrate/core/grid.hpp"
#include "calibrate/memory/memory_kernel.hpp"

namespace hopsim::calib {

TEST_CASE("memory kernels: every pass of every row has its launch in a CUDA build (no GPU)") {
  std::size_t passes = 0;
  for (const MemoryKernelRow* kernel : memory_kernel_rows()) {
    for (Pass pass : {Pass::Fwd, Pass::Bwd}) {
      if (kernel->pass(pass).exists()) {
        CAPTURE(kernel->name);
        const bool has_launch = kernel->pass(pass).launch != nullptr;
        CHECK(has_launch);
        ++passes;
      }
    }
  }
  CHECK(passes == grid_points(make_grid("smoke"), Suite::Memory).size() / 2);  // two sizes each
}

}  // namespace hopsim::calib
