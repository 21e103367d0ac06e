// cuDNN execution plans: heuristics → first engine config that finalizes → execute.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/backend/cudnn_desc.hpp"

namespace hopsim::calib {

class ExecutionPlan {
 public:
  /// Queries heuristics (mode A, then FALLBACK) for `graph` and keeps the first engine config
  /// whose plan finalizes. Needs a device; throws CudaError listing what was tried otherwise.
  ExecutionPlan(cudnnHandle_t handle, const BackendDesc& graph, const std::string& what);

  std::int64_t workspace_bytes() const { return workspace_bytes_; }

  /// The plan's engine and knobs (CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION), if available.
  const std::string& engine_json() const { return engine_json_; }

  /// A finalized variant pack: `tensors` maps UIDs to device pointers (by-value scalars: host
  /// pointers). Built once per buffer set, so no descriptor work happens inside a timed rep.
  static BackendDesc variant_pack(const std::vector<std::pair<std::int64_t, void*>>& tensors,
                                  void* workspace);

  /// Enqueues one execution on the handle's stream.
  void execute(cudnnHandle_t handle, const BackendDesc& pack) const;

 private:
  BackendDesc plan_;
  std::int64_t workspace_bytes_ = 0;
  std::string engine_json_;
};

}  // namespace hopsim::calib
