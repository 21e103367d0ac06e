// The MoE-layer workload: one MoE layer under expert parallelism, forward and backward.
//
// Per GPU and micro-batch (docs/expert-parallelism.md): attention and the router over its
// tokens, dispatch (each token to the GPUs of its top-k experts), the shared experts while the
// dispatch runs, the GPU's experts as grouped GEMMs over the rows it received, and combine
// (the results back to each token's GPU). Backward runs the exchanges in the same two
// directions (output gradients out to the experts, input gradients back) with the GEMMs at
// twice the forward FLOPs. Every EP group of the mesh routes its own tokens (seeded).
//
// Overlap: with two micro-batches, one micro-batch's exchanges run while the other computes
// (two halves of the tokens, or DualPipe's forward chunk against a backward chunk); the
// communication stream runs one exchange at a time, the compute stream one kernel at a time,
// in the order the schedule issues them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sim/problem.hpp"
#include "workloads/collectives/ep_algorithms.hpp"
#include "workloads/cp/attention_layer_job.hpp"
#include "workloads/env/job_env.hpp"
#include "workloads/ep/moe_routing.hpp"
#include "workloads/plan/probe.hpp"

namespace hopsim::work {

/// two_microbatch: the tokens split in two, one half's exchanges under the other's compute;
/// dualpipe_pair: DualPipe's chunk pair, a forward chunk of one micro-batch against a backward
/// chunk of another (each of tokens_per_gpu tokens), layer by layer.
enum class EpOverlap : std::uint8_t { None, TwoMicrobatch, DualPipePair };
/// none; bias: DeepSeek-V3's auxiliary-loss-free routing bias (workloads/ep/balancer.hpp);
/// aux_loss: an auxiliary balance loss, modelled as a pull of every expert's popularity toward
/// even that grows with the loss's weight (aux_uniform_share).
enum class Balancer : std::uint8_t { None, Bias, AuxLoss };

/// The auxiliary-loss balancer's model: the share of each expert's routing weight that is the
/// even 1 / experts, weight / (weight + 0.01). At the weight 0.01 half of each expert's weight
/// above or below even remains; at 0.1, a tenth. A shape, not a calibration: no published
/// measurement ties a loss weight to a load imbalance.
double aux_uniform_share(double weight);

/// "none", "two_microbatch", "dualpipe_pair"; "none", "bias", "aux_loss".
std::string_view ep_overlap_name(EpOverlap o);
std::string_view balancer_name(Balancer b);

/// The dtypes of a MoE layer's GEMMs: the routed experts' grouped GEMMs (FP8 also means the
/// dispatched rows arrive in FP8 and each GEMM's other inputs are cast by the workload's
/// fp8_recipe), the shared experts' GEMMs and the router's. DeepSeek-V3's FP8 recipe: experts
/// and shared experts FP8, router BF16; a BF16 recipe (Mixtral, Qwen3 MoE, Megatron's BF16
/// DeepSeek-V3 rows): all three BF16.
struct MoeDtypes {
  Dtype experts = Dtype::Fp8;
  Dtype shared = Dtype::Fp8;
  Dtype router = Dtype::Bf16;
};

/// One MoE layer under expert parallelism: dispatch, experts, combine.
struct MoeLayerJob {
  static constexpr std::string_view kKind = "moe_layer";
  static constexpr bool kSimulated = true;

  /// Tokens per GPU, top-k, node limit, popularity, capacity; `experts` is the model's routed
  /// experts.
  MoeRouting routing;
  Balancer balancer = Balancer::None;
  std::int64_t balance_steps = 50;          ///< bias: training steps before the simulated one
  double bias_update = 0.05;                ///< bias: gamma, in log-weight units per step
  double aux_loss_weight = 0.01;            ///< aux_loss: the loss's weight (alpha)
  MoeDtypes dtypes;
  double dispatch_bytes_per_element = 1.0;  ///< FP8 (DeepEP adds 1/32 for scales: 1.03125)
  double combine_bytes_per_element = 2.0;   ///< BF16
  /// How dispatch and combine run: a row of the EP exchange table
  /// (workloads/collectives/ep_algorithms.hpp).
  EpAlgorithm algorithm = EpAlgorithm::TwoTier;
  Passes passes = Passes::Forward;
  EpOverlap overlap = EpOverlap::None;
  /// SMs the communication kernels hold while an exchange runs on a GPU: a compute kernel there
  /// runs on the rest for the time it spends beside one (Plan::sm_share, sm_sharing.hpp).
  std::int64_t comm_sms = 0;
  /// How much slower a compute kernel wholly beside an exchange runs on a GPU of `sms` SMs:
  /// sms / (sms - comm_sms), 1 when the exchanges hold none.
  double compute_slowdown(std::int64_t sms) const {
    return comm_sms > 0 ? static_cast<double>(sms) / static_cast<double>(sms - comm_sms) : 1.0;
  }
  bool attention = true;    ///< the layer's attention part (and its FLOPs) before the router
  std::int64_t layers = 1;  ///< identical layers in a row (each routes like the first)
  /// More than kRepeatAbove layers: 2, 3 and 4 layers are measured first, and when the fourth
  /// adds exactly what the third did (a steady schedule), four are simulated and the rest
  /// repeat the last one's figures; false (or an unsteady schedule): every layer is simulated.
  /// (The first layer may add less than the next: its start is not staggered by a layer before.)
  bool repeat_layers = true;
  static constexpr std::int64_t kRepeatAbove = 12;
  static constexpr std::int64_t kRepeatSimulated = 4;
  /// A chunked algorithm (two_tier): tokens per InfiniBand piece, forwarded as it lands; 0: its
  /// library's for the EP size.
  std::int64_t chunk_tokens = 0;
  /// A chunked algorithm (two_tier): pieces as a stream (16 flows per node pair, 30-40 times
  /// fewer; DeepSeek-V3 layers within about 1% of each piece its own flows) or each piece its
  /// own flows; unset: streamed (set with another algorithm: an error).
  std::optional<Pieces> pieces;
  /// Selective recomputation's modules (RecomputeModule bits) that each backward layer runs
  /// again first, from its own forward kernels (workloads/costs/recompute_kernels.hpp): the
  /// attention part's before its backward, the SwiGLUs before the experts'; 0: none.
  std::uint8_t recompute_modules = 0;
  /// Redundant copies of hot experts per EP group, spread as extra slots over its GPUs
  /// (a multiple of the EP size; redundant_placement). routing.placement places explicitly.
  std::int64_t redundant_experts = 0;

  /// A MoE model whose experts split over ep; routing that fits the EP group; GPU figures.
  void check(const JobEnv& env, Problems& out) const;
  /// With repeat_layers and more than kRepeatAbove layers: the layer 2, 3 and 4 times in a row
  /// on every GPU of the mesh, measured before the case is built; else none.
  std::vector<Probe> probes(const BuildEnv& b) const;
  /// One case: the layers on every GPU of the mesh (four of them, the rest repeated, when the
  /// probes show a steady schedule).
  std::vector<Case> cases(const BuildEnv& b, const Measured& measured) const;

  /// Flows one exchange over `ranks` GPUs starts: as the algorithm's row bounds them, with the
  /// chunk the layer uses, or (`generous`) the smallest any library picks.
  double exchange_flows(const JobEnv& env, std::size_t ranks, bool generous) const;
  /// Bytes its plans take to build and simulate: the exchanges' flows and the kernels of every
  /// GPU, over the layers in plans at once (kBytesPerPlanFlow, kBytesPerPlanTask).
  double estimated_plan_bytes(const JobEnv& env) const;

  std::int64_t micro_batches() const { return overlap == EpOverlap::None ? 1 : 2; }

  /// Tokens per GPU of one micro-batch: half with two_microbatch.
  std::int64_t micro_batch_tokens() const {
    return routing.tokens_per_gpu / (overlap == EpOverlap::TwoMicrobatch ? 2 : 1);
  }

  Pieces pieces_used() const { return pieces.value_or(Pieces::Streamed); }

  bool forward() const { return passes != Passes::Backward; }

  bool backward() const { return passes != Passes::Forward; }

 private:
  // The parts of check(): the model and sizes; the settings against each other and the EP
  // group; what the plan would cost (compute, flows, bytes) against the simulator's bounds.
  bool check_sizes(const JobEnv& env, Problems& out) const;
  void check_settings(const JobEnv& env, std::span<const topo::GpuId> group, Problems& out) const;
  void check_bounds(const JobEnv& env, std::span<const topo::GpuId> group, Problems& out) const;
  // The case with `simulated` of the layers in its plan.
  Case build(const BuildEnv& b, std::int64_t simulated) const;
};

}  // namespace hopsim::work
