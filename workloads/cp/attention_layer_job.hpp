// The attention-layer workload: one transformer layer's attention (or the whole dense layer)
// under tensor and context parallelism, forward and backward, training or prefill.
//
// Per layer and GPU (TP with sequence parallelism: each GPU holds s/(cp tp) tokens between
// layers): all-gather the TP group's tokens, QKV projection, attention under CP, output
// projection, reduce-scatter; with `mlp`, the same around the MLP. Backward mirrors it
// (reduce-scatter <-> all-gather, GEMMs at twice the FLOPs, attention backward). Every GPU of
// the mesh runs; each TP rank runs its own CP ring, so with TP inside a node and CP across
// nodes the rings cross the fabric on their own rails.
//
// CP algorithms (workloads/cp/cp_algorithms.hpp, one row each): ring (pass-KV), ring_pass_q
// (prefill only), allgather (Llama 3: all-gather K and V, exposed; backward reduce-scatters
// dK/dV), ulysses (all-to-all from sequence to heads and back; with ulysses_degree < cp a
// pass-KV ring runs across the Ulysses groups).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/compute/compute_model.hpp"
#include "workloads/cp/cp_algorithms.hpp"
#include "workloads/cp/cp_layout.hpp"
#include "workloads/cp/tp_overlap.hpp"
#include "workloads/env/job_env.hpp"

namespace hopsim::work {

enum class LayerMode : std::uint8_t { Training, Prefill };
enum class Passes : std::uint8_t { Forward, Backward, Both };

/// "training", "prefill"; "forward", "backward", "both".
std::string_view mode_name(LayerMode m);
std::string_view passes_name(Passes p);

/// Model FLOPs of `p` in forwards: the forward once, the backward twice (the model-FLOPs
/// convention throughput counts by).
inline double model_flops_passes(Passes p) {
  return (p != Passes::Backward ? 1.0 : 0.0) + (p != Passes::Forward ? 2.0 : 0.0);
}

/// Whose CP runs the ring (cp_torch.hpp): Megatron-Core's / Transformer Engine's (ring_attention.hpp),
/// or PyTorch's context_parallel as TorchTitan runs it.
enum class CpImpl : std::uint8_t { Megatron, Torch };
/// How PyTorch's CP moves K/V (its _cp_options.rotate_method): one all-gather of every block
/// after the first step's attention starts, or a shift to the next rank every step.
enum class CpRotate : std::uint8_t { AllGather, AllToAll };

/// "megatron", "torch"; "allgather", "alltoall".
std::string_view cp_impl_name(CpImpl i);
std::string_view cp_rotate_name(CpRotate r);

struct CpSettings {
  CpAlgorithm algorithm = CpAlgorithm::Ring;
  CpImpl impl = CpImpl::Megatron;
  CpRotate rotate = CpRotate::AllGather;  ///< impl torch only
  CpBalance balance = CpBalance::Zigzag;
  /// Ulysses: ranks per all-to-all group (0: all of cp); a pass-KV ring runs over cp / this.
  std::int64_t ulysses_degree = 0;
  /// Ulysses with more ranks than KV heads: each rank gets a copy of the KV head it needs.
  bool replicate_kv = false;
};

/// Per-GPU dimensions of the layer under the mesh's degrees.
struct AttentionDims {
  std::int64_t tokens = 0;    ///< new tokens per GPU and layer, all sequences: S mb / cp
  std::int64_t q_heads = 0;   ///< per TP rank
  std::int64_t kv_heads = 0;  ///< per TP rank (at least 1: replicated beyond)
  std::int64_t d_qk = 0;
  std::int64_t d_v = 0;
  std::int64_t elem = 2;           ///< bytes per element of the dtype
  std::int64_t u = 1;              ///< Ulysses group
  std::int64_t r = 1;              ///< ring positions: cp / u
  std::int64_t attn_q_heads = 0;   ///< per GPU inside attention (after Ulysses)
  std::int64_t attn_kv_heads = 0;  ///< per GPU inside attention (replicated when u exceeds)
};

struct AttentionLayerJob {
  static constexpr std::string_view kKind = "attention_layer";
  static constexpr bool kSimulated = true;

  std::int64_t seq_len = 8192;  ///< new tokens per sequence
  std::int64_t micro_batch = 1;
  AttentionMask mask = AttentionMask::Causal;
  std::vector<std::int64_t> documents;    ///< mask document: lengths summing to seq_len...
  std::int64_t document_mean_tokens = 0;  ///< ... or drawn with this mean (seeded)
  std::int64_t cached_tokens = 0;         ///< prefill: context already in the KV cache
  /// Prefill: what a request costs beyond its layers (scheduling, sampling, the partitioning's
  /// bookkeeping), paid once on every GPU before the first layer
  Time request_overhead;
  bool mlp = false;  ///< the whole dense layer, not only attention
  std::int64_t layers = 1;
  LayerMode mode = LayerMode::Training;
  Passes passes = Passes::Both;
  Dtype dtype = Dtype::Bf16;      ///< the attention's projections (QKV, output)
  Dtype mlp_dtype = Dtype::Bf16;  ///< the MLP's GEMMs (Llama 3 405B inference: FP8)
  /// With dtype FP8, the attention kernel too runs FP8 and CP sends K/V as FP8 (Transformer
  /// Engine's fp8_dpa, Megatron's --fp8-dot-product-attention); off, as the recipes leave it,
  /// the kernel and the K/V run BF16 between FP8 projections.
  bool fp8_dot_product_attention = false;
  CpSettings cp;
  /// How the TP all-gathers and reduce-scatters run beside the GEMMs (tp_overlap.hpp): none
  /// (Megatron's default, each exposed), userbuffers (Megatron's --tp-comm-overlap), async_tp
  TpOverlap tp_overlap = TpOverlap::None;

  /// A model that the degrees split; chunks that divide; settings that fit the algorithm.
  void check(const JobEnv& env, Problems& out) const;
  /// One case: the layer(s), every GPU of the mesh.
  std::vector<Case> cases(const BuildEnv& b) const;
  /// Tasks of its plan on `mesh`, about: per layer and GPU a handful of GEMMs, a compute step
  /// and a few flows per ring step, and the TP collectives' flows.
  double plan_tasks(const Mesh& mesh) const;
  /// Bytes its plan takes to build and simulate: plan_tasks() x kBytesPerPlanTask.
  double estimated_plan_bytes(const JobEnv& env) const;

  /// The type the attention kernel runs and K/V travel in: FP8 only with dtype FP8 and
  /// fp8_dot_product_attention, and never under PyTorch's CP (SDPA runs BF16).
  Dtype kernel_dtype() const;
  /// Ulysses group size (1 unless the algorithm has Ulysses groups) and the ring over the rest.
  std::int64_t ulysses(std::int64_t cp_degree) const;
  AttentionDims dims(const ModelSpec& m, const ParallelSpec& p) const;
  /// Bytes of one ring position's K and V block (its new and cached tokens) on one GPU, with
  /// dims `d` and token layout `layout`: what a pass-KV hop sends.
  std::int64_t kv_block_bytes(const AttentionDims& d, const CpLayout& layout) const;
  /// F / B for the GPU's peak (of the dtype) and the line rate of the ring's link (across
  /// nodes times `net_efficiency`, NCCL's send/recv share of it), scaled by the model's K/V
  /// bytes per query FLOP: a full block of more tokens than this computes for longer than its
  /// K/V take to arrive. With MHA in BF16 at the line rate it is the seeds' F / B.
  double overlap_threshold_tokens(const ModelSpec& m, const ParallelSpec& p,
                                  const topo::Spec& cluster, bool over_network,
                                  double net_efficiency = 1.0) const;

  /// Meta's choice between pass-KV and pass-Q for a prefill of seq_len new tokens over
  /// cached_tokens (arXiv 2411.01783, Algorithm 5), with C the GPU's peak (of the dtype) and BW
  /// the rate of the ring's link as overlap_threshold_tokens takes it, per GPU (TP splits heads,
  /// compute and traffic alike):
  /// pass-KV when T >= N C N_KV e / (2 N_H BW) (its K/V hide under attention) or when the miss
  /// rate T / (T + P) >= 2 N_KV / N_H - 4 T BW / (N C e) (pass-Q's queries and its output
  /// all-to-all cost more), else pass-Q.
  struct PassChoice {
    double message_rule_miss_rate = 0;  ///< 2 N_KV / N_H: where Q and K/V weigh the same
    double hidden_kv_tokens = 0;        ///< T above which pass-KV's K/V hide (Eq. 2)
    double crossover_miss_rate = 0;     ///< at this context T + P, pass-Q below it
    double miss_rate = 0;               ///< this job's T / (T + P)
    bool pass_kv = true;                ///< the rule's pick for this job
  };

  PassChoice pass_choice(const ModelSpec& m, const ParallelSpec& p, const topo::Spec& cluster,
                         bool over_network, double net_efficiency = 1.0) const;
  /// The token layout of a CP group's ring.
  CpLayout layout(std::int64_t cp_degree, std::uint64_t seed) const;

  bool forward() const { return passes != Passes::Backward; }

  bool backward() const { return passes != Passes::Forward; }

  /// (Query, key) pairs one sequence attends under the mask, cached context included
  /// (documents: the layer's, or drawn with `seed` as the layer draws them).
  double attended_pairs(std::uint64_t seed) const;
  /// The mesh's GPUs, the tokens its TP x CP groups hold (micro_batch sequences each), and
  /// the layers' model FLOPs as they pass (backward twice the forward): the scores'
  /// 4 h per attended pair, and `gemm_flops_per_token` (forward) per token.
  Throughput throughput(const JobEnv& env, double gemm_flops_per_token) const;
};

}  // namespace hopsim::work
