// The transformer-layer workload: attention under TP and CP, then the feed-forward part, a
// dense SwiGLU MLP or a MoE under EP; `layers` of them, forward then backward. One experiment
// can so vary CP and EP together (docs/transformer-layer.md).
//
// Between layers each GPU holds seq_len x micro_batch / (cp x tp) tokens (sequence
// parallelism); those are the tokens it routes. Forward, per layer: the attention part as the
// attention_layer kind builds it, then router, dispatch, experts and combine as the moe_layer
// kind builds them (without its own attention). Backward: the MoE part's backward, then
// attention's. Each GPU's next stage waits for its previous one.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/cp/attention_layer_job.hpp"
#include "workloads/env/job_env.hpp"
#include "workloads/ep/moe_layer_job.hpp"

namespace hopsim::work {

struct TransformerLayerJob {
  static constexpr std::string_view kKind = "transformer_layer";
  static constexpr bool kSimulated = true;

  /// The attention part, and the layer's settings: seq_len, micro_batch, mask, cp, layers,
  /// mode, passes, dtypes. Its mlp is set when the feed-forward part is dense.
  AttentionLayerJob attention;
  /// The MoE part's own settings (routing, exchanges); empty when the feed-forward part is
  /// dense. moe_part() completes it.
  std::optional<MoeLayerJob> moe;

  /// Both parts' checks (MoE problems under /workload/moe), and tokens that split over
  /// cp x tp.
  void check(const JobEnv& env, Problems& out) const;
  /// One case: the layers on every GPU of the mesh.
  std::vector<Case> cases(const BuildEnv& b) const;
  /// A MoE layer's overlapped pair as Megatron's EP overlap runs it (MoeBuilder::pair): one
  /// micro-batch's forward (attention with its TP collectives, router, dispatch, experts,
  /// combine) against another's backward, each EP exchange on the comm stream under the other
  /// micro-batch's compute; the attention parts and their TP collectives in their own
  /// micro-batch's chain. It runs nothing again: recomputation runs before it.
  Plan overlapped_pair(const BuildEnv& b) const;
  /// Bytes its plan takes to build and simulate: both parts' estimates.
  double estimated_plan_bytes(const JobEnv& env) const;

  /// Tokens a GPU holds between layers: seq_len x micro_batch / (cp x tp).
  std::int64_t tokens_per_gpu(const ParallelSpec& p) const {
    return attention.seq_len * attention.micro_batch / (p.cp * p.tp);
  }
  /// The MoE part as a MoE layer on the mesh `p`: the GPU's tokens, the attention part's
  /// layers and passes, no attention of its own, no overlap. Needs moe.
  MoeLayerJob moe_part(const ParallelSpec& p) const;
};

}  // namespace hopsim::work
