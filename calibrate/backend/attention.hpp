// Fused attention on the device: cached cuDNN plans per shape, and a runner that owns the
// BSHD buffers of one shape and executes its forward or backward pass.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "calibrate/backend/buffers.hpp"
#include "calibrate/backend/context.hpp"
#include "calibrate/backend/cudnn_plan.hpp"
#include "calibrate/backend/sdpa_graph.hpp"

namespace hopsim::calib {

/// Plans by shape, kept for the whole run: building one takes up to seconds (runtime-compiled
/// engines), and a backward point reuses the forward plan of its shape.
class AttnPlanCache {
 public:
  struct Fwd {
    SdpaFwdGraph graph;
    ExecutionPlan plan;
  };

  struct Bwd {
    SdpaBwdGraph graph;
    ExecutionPlan plan;
  };

  const Fwd& fwd(cudnnHandle_t handle, const SdpaShape& shape);
  const Bwd& bwd(cudnnHandle_t handle, const SdpaShape& shape);

 private:
  std::map<std::string, std::unique_ptr<Fwd>> fwd_;
  std::map<std::string, std::unique_ptr<Bwd>> bwd_;
};

class AttnRunner {
 public:
  /// Allocates and fills Q, K, V (and dO) with N(0, 1) BF16 values; for the backward pass also
  /// runs the forward once so O and Stats are real.
  AttnRunner(GpuContext& ctx, AttnPlanCache& cache, const SdpaShape& shape, Pass pass,
             std::uint64_t seed = 1);

  /// Enqueues one execution of the pass on ctx.stream().
  void run();
  void run_forward();

  const SdpaShape& shape() const { return shape_; }

  const DeviceBuffer& q() const { return q_; }

  const DeviceBuffer& k() const { return k_; }

  const DeviceBuffer& v() const { return v_; }

  const DeviceBuffer& o() const { return o_; }

  const DeviceBuffer& stats() const { return stats_; }

  const DeviceBuffer& d_o() const { return d_o_; }

  const DeviceBuffer& dq() const { return dq_; }

  const DeviceBuffer& dk() const { return dk_; }

  const DeviceBuffer& dv() const { return dv_; }

  std::string engines() const;

 private:
  GpuContext& ctx_;
  SdpaShape shape_;
  Pass pass_;
  const AttnPlanCache::Fwd* fwd_ = nullptr;
  const AttnPlanCache::Bwd* bwd_ = nullptr;
  DeviceBuffer q_, k_, v_, o_, stats_, d_o_, dq_, dk_, dv_, softmax_sum_, dq_accum_, workspace_;
  BackendDesc fwd_pack_, bwd_pack_;
};

}  // namespace hopsim::calib
