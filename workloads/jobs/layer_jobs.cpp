// Checks shared by the layer workloads, and the MoE layer's.
#include "workloads/jobs/layer_jobs.hpp"

#include <fmt/format.h>

#include "workloads/model/model_check.hpp"

namespace hopsim::work {

// The model the layer needs, fitted to the degrees, and the GPU figures its kernels need.
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

namespace {

// The compute model takes kernel dimensions up to 2^31.
constexpr std::int64_t kMaxExtent = std::int64_t{1} << 31;

}  // namespace

void MoeLayerJob::check(const JobEnv& env, Problems& out) const {
  if (!check_model_and_gpu(env, kKind, out)) {
    return;
  }
  if (env.model->moe.routed_experts == 0) {
    out.push_back({"/workload/kind",
                   fmt::format("model \"{}\" has no routed experts", env.model->name)});
    return;
  }
  if (routing.tokens_per_gpu * routing.top_k > kMaxExtent) {
    out.push_back({"/workload/tokens_per_gpu",
                   fmt::format("{} tokens x top-{} make expert GEMMs larger than 2^31 rows",
                               routing.tokens_per_gpu, routing.top_k)});
    return;
  }
  const Problems bad_routing = check_routing(routing, env.mesh.group(Dim::Ep, 0),
                                             env.cluster.gpus_per_node, "/workload");
  out.insert(out.end(), bad_routing.begin(), bad_routing.end());
}

}  // namespace hopsim::work
