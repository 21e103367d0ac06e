// The builder behind the MoE-layer kind: adds MoE layers to a plan on every GPU of the mesh,
// per micro-batch, and keeps per GPU the tasks its next layer starts after (the
// transformer_layer kind chains it after the attention builder).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "workloads/cp/attention_builder.hpp"
#include "workloads/ep/ep_details.hpp"
#include "workloads/ep/moe_layer_job.hpp"

namespace hopsim::work {

/// What a transformer layer's pair runs around the MoE part's (MoeBuilder::pair): one
/// micro-batch's attention forward before its router, the other's attention backward after
/// its router's backward; each takes per GPU what it starts after and returns what follows
/// it. Their TP collectives stay in their own micro-batch's chain (the compute stream's side
/// of the pair), not on the EP exchanges' stream.
struct PairAttention {
  std::function<std::vector<TaskList>(const std::vector<TaskList>&)> forward;
  std::function<std::vector<TaskList>(const std::vector<TaskList>&)> backward;
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
  /// The pair with a transformer layer's attention parts (the job has attention false).
  void pair(const PairAttention& attention);
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
