// Engine heuristics, plan finalization and variant-pack execution.
#include "calibrate/backend/cudnn_plan.hpp"

#include <fmt/format.h>

#include "calibrate/backend/cuda_check.hpp"

namespace hopsim::calib {
namespace {

std::vector<BackendDesc> engine_configs(const BackendDesc& graph, cudnnBackendHeurMode_t mode) {
  BackendDesc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  heur.finalize();
  std::int64_t count = 0;
  HOPSIM_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  std::vector<BackendDesc> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    raw.push_back(configs.back().get());
  }
  if (count > 0) {
    std::int64_t got = 0;
    HOPSIM_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                                raw.data()));
    configs.resize(static_cast<std::size_t>(got));
  }
  return configs;
}

std::string plan_json(const BackendDesc& plan) {
  std::int64_t size = 0;
  if (cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                               CUDNN_TYPE_CHAR, 0, &size, nullptr) != CUDNN_STATUS_SUCCESS ||
      size <= 0) {
    return {};
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  if (cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION,
                               CUDNN_TYPE_CHAR, size, &size, text.data()) != CUDNN_STATUS_SUCCESS) {
    return {};
  }
  while (!text.empty() && text.back() == '\0') {
    text.pop_back();
  }
  return text;
}

}  // namespace

ExecutionPlan::ExecutionPlan(cudnnHandle_t handle, const BackendDesc& graph,
                             const std::string& what) {
  std::string tried;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    std::vector<BackendDesc> configs;
    try {
      configs = engine_configs(graph, mode);
    } catch (const CudaError& e) {
      tried += fmt::format(" [heuristics mode {}: {}]", static_cast<int>(mode), e.what());
      continue;
    }
    tried += fmt::format(" [mode {}: {} configs]", static_cast<int>(mode), configs.size());
    for (const BackendDesc& config : configs) {
      BackendDesc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
#pragma GCC diagnostic pop
      plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
      const cudnnStatus_t st = cudnnBackendFinalize(plan.get());
      if (st != CUDNN_STATUS_SUCCESS) {
        tried += fmt::format(" [finalize: {}]", cudnn_status_text(st));
        continue;
      }
      HOPSIM_CUDNN_CHECK(cudnnBackendGetAttribute(plan.get(),
                                                  CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                  CUDNN_TYPE_INT64, 1, nullptr, &workspace_bytes_));
      engine_json_ = plan_json(plan);
      plan_ = std::move(plan);
      return;
    }
  }
  throw CudaError(fmt::format("cuDNN has no executable plan for {}:{}", what, tried), "cudnn", 0);
}

BackendDesc ExecutionPlan::variant_pack(const std::vector<std::pair<std::int64_t, void*>>& tensors,
                                        void* workspace) {
  std::vector<std::int64_t> uids;
  std::vector<void*> ptrs;
  for (const auto& [uid, ptr] : tensors) {
    uids.push_back(uid);
    ptrs.push_back(ptr);
  }
  BackendDesc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
           static_cast<std::int64_t>(uids.size()), uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           static_cast<std::int64_t>(ptrs.size()), ptrs.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  pack.finalize();
  return pack;
}

void ExecutionPlan::execute(cudnnHandle_t handle, const BackendDesc& pack) const {
  HOPSIM_CUDNN_CHECK(cudnnBackendExecute(handle, plan_.get(), pack.get()));
}

}  // namespace hopsim::calib
