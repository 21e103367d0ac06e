// The builders behind the layer workloads. Each adds layers of one kind to a plan, on every
// GPU of the mesh, and keeps per GPU the tasks its next layer starts after. attention_layer
// and moe_layer use one each; transformer_layer chains both: attention then MoE, layer by
// layer (backward: MoE then attention), handing each GPU's frontier from one to the other.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "workloads/jobs/attention_layer_job.hpp"
#include "workloads/jobs/job_env.hpp"
#include "workloads/jobs/moe_layer_job.hpp"

namespace hopsim::work {

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

/// MoE layers under EP: router (and attention when the job has it), dispatch, experts, combine.
class MoeBuilder {
 public:
  MoeBuilder(const MoeLayerJob& job, const BuildEnv& b, Plan& plan);
  ~MoeBuilder();
  MoeBuilder(const MoeBuilder&) = delete;
  MoeBuilder& operator=(const MoeBuilder&) = delete;

  /// One layer of every micro-batch, forward; backward; DualPipe's chunk pair.
  void forward();
  void backward();
  void pair();
  /// Every micro-batch waits for all of them (between the forward and backward passes).
  void join();
  /// Per GPU: what micro-batch `mb`'s next layer starts after.
  std::vector<TaskList>& ready(std::int64_t mb);
  /// Routing, loads and the balancer's steps (of the first EP group).
  EpDetails details() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hopsim::work
