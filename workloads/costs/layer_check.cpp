// The checks the layer kinds share (layer_check.hpp).
#include "workloads/costs/layer_check.hpp"

#include <fmt/format.h>

#include "workloads/model/model_check.hpp"

namespace hopsim::work {

bool check_model_and_gpu(const JobEnv& env, std::string_view kind, Problems& out) {
  if (env.model == nullptr) {
    out.push_back({"/model", fmt::format("workload kind \"{}\" needs a model", kind)});
    return false;
  }
  const Problems fit = check_model_fit(*env.model, env.mesh.spec());
  out.insert(out.end(), fit.begin(), fit.end());
  const topo::GpuSpec& gpu = env.cluster.gpu;
  if (!(gpu.peak_bf16_tflops > 0 && gpu.peak_fp8_tflops > 0 && gpu.hbm_GBps > 0)) {
    out.push_back({"/cluster/gpu", "the compute model needs the GPU's BF16 and FP8 peaks and "
                                   "HBM bandwidth"});
  }
  return out.empty();
}

}  // namespace hopsim::work
