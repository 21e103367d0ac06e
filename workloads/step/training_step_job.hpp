// The training-step workload: every layer of a model, forward and backward, over the
// micro-batches of one global batch, on the whole rank mesh (TP, CP, PP, DP, EP), pipeline
// schedule, gradient synchronization over data parallelism and the optimizer step
// (docs/training-step.md).
//
// Folded, so that 16,384 GPUs fit: most ranks of a step do the same thing at the same time.
// The folded step is measured, then assembled: probes() lists the sub-plans below, run()
// simulates them (counted, traced, in parallel), and cases() builds the step from their times.
//   1. Each layer kind the model has (dense, MoE) runs once, forward and once backward, as the
//      transformer_layer kind builds it, on one layer group: the lcm(tp x cp, ep) GPUs whose
//      TP, CP and EP collectives it needs, at their places in the cluster.
//   2. One layer's gradient synchronization (reduce-scatter under ZeRO-1 and 3, all-reduce
//      under ZeRO-0) and, under ZeRO-3, its parameter all-gather run once per layer kind, over
//      every DP group of one pipeline stage at once, so that the NICs and fabric carry the
//      load the whole stage puts on them.
//   3. The pipeline runs on one GPU per stage: each op takes its layers' simulated times, the
//      activations cross between stages as real flows, each layer's gradient bucket starts as
//      its last backward piece ends (serialized on the rank's DP stream), then the optimizer,
//      then (ZeRO-1) the parameter all-gather. Under ZeRO-3 each op waits for its layers'
//      gathers (param_prefetch.hpp), and every backward's layers reduce their gradients.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/costs/output_layer.hpp"
#include "workloads/env/job_env.hpp"
#include "workloads/layer/transformer_layer_job.hpp"
#include "workloads/plan/probe.hpp"
#include "workloads/step/schedule_table.hpp"
#include "workloads/step/step_model.hpp"

namespace hopsim::work {

struct TrainingStepJob {
  static constexpr std::string_view kKind = "training_step";
  static constexpr bool kSimulated = true;

  /// Megatron-DeepSpeed's remainder of an iteration beyond forward-backward and the optimizer,
  /// fitted on one published log (AuroraGPT-7B, docs/training-step.md#the-steps-fixed-cost):
  /// 14.2 ms, the mean of iterations 3 and 4.
  static constexpr Time kDefaultStepOverhead = Time::us(14'200);

  /// Every layer's settings (seq_len, micro_batch, mask, cp, dtypes) and, for a MoE model, its
  /// MoE part's (routing, exchanges). Its layers and passes are the step's to set.
  TransformerLayerJob layer;
  std::int64_t global_batch = 0;                      ///< sequences per step, over all DP replicas
  const ScheduleRow* schedule = &default_schedule();  ///< a row of schedule_table.hpp
  /// schedule "auto": every schedule of schedule_candidates is checked and simulated, the
  /// fastest that fits kept (run.cpp); `schedule` is then unused
  bool schedule_auto = false;
  int virtual_stages = 1;  ///< model chunks per pipeline rank (interleaved: >= 2)
  /// Interleaved: micro-batches per group through the chunks (0: pp, Megatron's order; fewer
  /// is Meta's variant: fewer micro-batches in flight, a larger bubble;
  /// schedule_interleaved.cpp)
  int microbatch_group = 0;
  /// 0: all-reduce, full optimizer states; 1: optimizer states sharded (Megatron's);
  /// 3: parameters and gradients sharded too (FSDP): each layer's parameters gathered before
  /// every forward and backward of it, prefetched one layer ahead, and its gradients
  /// reduce-scattered after every backward
  int zero = 1;
  RecomputeSpec recompute;  ///< granularity, selective's modules, full's method (step_model.hpp)
  /// Bytes per saved activation that only GEMMs and SwiGLU read back: 2 (BF16) or 1 (FP8)
  double gemm_input_bytes = 2;
  double grad_bytes = 2;    ///< per parameter, the gradient buffer and its reduction
  double moment_bytes = 4;  ///< per parameter, each of Adam's moments: 4 (FP32) or 2 (BF16)
  /// The framework's fixed cost per step, after the optimizer and the parameter gathers on
  /// every GPU (zeroing the gradients, the learning-rate update, the loss's reduction, logging,
  /// the host's loop): kDefaultStepOverhead unless the workload sets step_overhead_ms
  Time step_overhead = kDefaultStepOverhead;
  /// Megatron's --cpu-offloading-num-layers: the first N layers' saved activations are copied
  /// to host memory after their forward and back before their backward (pp 1, no
  /// recomputation, folded; docs/training-step.md#activation-offload)
  int cpu_offload_layers = 0;
  /// The loss over the vocabulary on the last stage (output_layer.hpp)
  CrossEntropyKernel cross_entropy = CrossEntropyKernel::Unfused;
  /// Layers of each model stage, in order (Megatron's --pipeline-model-parallel-layout, as
  /// counts): one per stage, each at least 1, summing to the model's layers and its MTP
  /// blocks. Empty: layers_per_stage's even split.
  std::vector<std::int64_t> stage_layers;
  /// Fold the step (above); false puts every GPU of the mesh in one plan: each op a real
  /// transformer-layer subgraph on its stage's GPUs, real activation flows between every pair
  /// of stage GPUs, real gradient collectives. For checking the folding on small clusters.
  bool fold = true;

  /// Micro-batches per pipeline in one step: global_batch / (dp x micro_batch).
  std::int64_t micro_batches(const ParallelSpec& p) const {
    return global_batch / (p.dp * layer.attention.micro_batch);
  }

  /// Bytes one GPU sends the next pipeline stage per micro-batch (activations forward, their
  /// gradients backward): its share of the micro-batch's tokens (sequence parallelism over tp,
  /// context parallelism over cp), BF16, hidden wide.
  Bytes transfer_bytes(const ParallelSpec& p, const ModelSpec& m) const {
    return Bytes{layer.attention.seq_len * layer.attention.micro_batch * m.hidden * 2 /
                 (p.tp * p.cp)};
  }

  /// The memory and FLOPs inputs; the model must be set.
  StepShape shape(const JobEnv& env) const;
  /// The mesh of one layer group: tp, cp, ep as the step's, pp 1, and dp just large enough for
  /// an EP group (lcm(tp x cp, ep) GPUs).
  static ParallelSpec layer_spec(const ParallelSpec& p);

  /// global_batch split over dp x micro_batch, layers over the schedule's model stages, the
  /// schedule's shape, each layer kind's own checks on its layer group, and memory per GPU
  /// within HBM.
  void check(const JobEnv& env, Problems& out) const;

  /// The shape its schedule is laid out over (pp ranks, micro-batches, chunks, group).
  PipeShape pipe_shape(const ParallelSpec& p) const {
    return {static_cast<int>(p.pp), static_cast<int>(micro_batches(p)), virtual_stages,
            microbatch_group};
  }

  /// Folded: what run() measures first (each layer kind's forward and backward on one layer
  /// group, the overlapped pair of a schedule that pairs ops, every DP collective over one
  /// stage); none unfolded.
  std::vector<Probe> probes(const BuildEnv& b) const;
  /// One case: the step, folded from `measured` (the probes above, simulated) or not.
  std::vector<Case> cases(const BuildEnv& b, const Measured& measured) const;
  /// Memory the unfolded plan takes to build and simulate, estimated from its tasks: every GPU
  /// runs micro_batches x (layers / pp) layer passes forward and backward, each a few tasks
  /// per TP and CP peer (and per EP peer in MoE layers), at ~150 bytes a task (measured on the
  /// 8B step unfolded at 256 and 512 GPUs). Folded: 0 (a layer group and one stage).
  double estimated_plan_bytes(const JobEnv& env) const;
};

}  // namespace hopsim::work
