// The memory-bound kernels against their FP64 host references (checks.hpp): every pass a row
// checks, run once on kMemoryCheckRows rows of its check width.
#include <fmt/format.h>

#include "calibrate/backend/checks.hpp"
#include "calibrate/backend/cuda_check.hpp"
#include "calibrate/backend/memory.hpp"

namespace hopsim::calib {

std::vector<CheckResult> memory_checks(GpuContext& ctx) {
  std::vector<CheckResult> out;
  for (const MemoryKernelRow* kernel : memory_kernel_rows()) {
    for (Pass pass : {Pass::Fwd, Pass::Bwd}) {
      const MemoryPass& p = kernel->pass(pass);
      if (!p.exists() || p.check == nullptr) {
        continue;
      }
      const std::string name = fmt::format("memory {} {} ({} x {})", kernel->name, to_string(pass),
                                           kMemoryCheckRows, kernel->check_width);
      out.push_back(guarded(Op::Memory, name, [&](std::string& detail) {
        const MemoryRunner run(ctx, *kernel, pass, kMemoryCheckRows, kernel->check_width);
        run.run();
        HOPSIM_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
        return p.check(run.readback(), detail);
      }));
    }
  }
  return out;
}

}  // namespace hopsim::calib
