// The builder behind the attention-layer kind: adds attention layers (or whole dense layers)
// to a plan on every GPU of the mesh, and keeps per GPU the tasks its next layer starts after,
// so that the transformer_layer kind (layer/) can chain it with the MoE builder (ep/).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "workloads/cp/attention_layer_job.hpp"
#include "workloads/cp/cp_details.hpp"
#include "workloads/env/job_env.hpp"

namespace hopsim::work {

/// Per GPU, the tasks a next stage waits for.
using TaskList = std::vector<PlanTaskId>;

/// Attention layers (or whole dense layers, with the job's mlp) under TP and CP.
class AttentionBuilder {
 public:
  AttentionBuilder(const AttentionLayerJob& job, const BuildEnv& b, Plan& plan);
  ~AttentionBuilder();
  AttentionBuilder(const AttentionBuilder&) = delete;
  AttentionBuilder& operator=(const AttentionBuilder&) = delete;

  /// What is known of the CP layout before the run; layer(pass, &details) adds the ring steps
  /// of its GPUs, cp_bytes_fwd() the bytes once the layers are built.
  CpDetails details() const;
  /// One layer, one pass, after each GPU's frontier.
  void layer(Pass pass, CpDetails* record);
  /// Per GPU: what its next stage waits for.
  std::vector<TaskList>& frontier();
  /// CP bytes one GPU sends in one layer's forward pass.
  std::int64_t cp_bytes_fwd() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hopsim::work
