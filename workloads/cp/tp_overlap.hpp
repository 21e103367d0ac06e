// TP communication overlap as frameworks run it (docs/transformer-layer.md#tp-overlap): a
// layer block's TP all-gather and reduce-scatter (sequence parallelism) split into pieces that
// run beside pieces of the GEMM next to them, instead of before or after it.
//
// Methods, as Transformer Engine's userbuffers names them:
// - ring_exchange: the GEMM in tp pieces, one per rank's shard; the all-gather as tp - 1 ring
//   steps, piece k computing once step k has brought its shard (piece 0 is the rank's own);
//   as a reduce-scatter, each piece's partial output goes one ring step onward while the next
//   piece computes. What it cannot hide: a step slower than a piece, and each step's launch.
// - pipeline: the GEMM in `splits` pieces along its tokens, each piece's output reduce-scattered
//   (a whole ring) while the next computes; the last piece's reduce-scatter stays exposed.
// - bulk: the backward's reduce-scatter of the input gradient whole, beside the weight gradient
//   GEMM of the same layer (which runs after the input gradient's, not before).
// Each method's communication kernels hold `sms` SMs: the GEMM pieces beside them run on the
// rest, sms / (SMs - sms) longer.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "workloads/compute/compute_model.hpp"
#include "workloads/costs/layer_costs.hpp"

namespace hopsim::work {

/// Which framework's overlap the layer's TP collectives run under.
enum class TpOverlap : std::uint8_t { None, Userbuffers, AsyncTp };
/// The config names of TpOverlap, in enum order.
inline constexpr std::array<std::string_view, 3> kTpOverlapNames{"none", "userbuffers",
                                                                 "async_tp"};

enum class OverlapMethod : std::uint8_t { RingExchange, Pipeline, Bulk };

/// How one TP collective runs beside its GEMM.
struct OverlapSite {
  OverlapMethod method = OverlapMethod::RingExchange;
  int sms = 0;     ///< SMs its communication kernels hold while the GEMM runs
  int splits = 0;  ///< pipeline: GEMM pieces (ring_exchange: always the TP degree)
};

/// A block's two TP collectives: the all-gather before its first GEMM, the reduce-scatter
/// after its last (absent where the block has none: attention's projections are two blocks
/// around the attention kernel).
struct BlockSites {
  std::optional<OverlapSite> gather;
  std::optional<OverlapSite> scatter;
};

/// The layer's blocks under `overlap`, per pass: the attention's projections before and after
/// attention (in the order the pass runs them) and the MLP.
struct LayerSites {
  BlockSites first;   ///< forward: the QKV block's all-gather; backward: the output projection's
  BlockSites second;  ///< forward: the output projection's reduce-scatter; backward: QKV's
  BlockSites mlp;
};

/// userbuffers: NVIDIA NeMo's userbuffers_bf16_h100_h8192_tp4_mbs1_seqlen8192 (the Llama 3 70B
/// recipes' tp_comm_overlap_cfg), the methods and SMs it gives each GEMM. async_tp: PyTorch's
/// AsyncTP (TorchTitan), every collective decomposed as a ring exchange over copy engines
/// (no SMs). None: nullopt.
std::optional<LayerSites> layer_sites(TpOverlap overlap, Pass pass);

class CpStage;

/// One block's kernels (`run`, in the order the pass runs them) on every GPU of each TP group
/// of the stage's mesh, with the collectives `sites` names beside its first and last GEMM
/// (forward: fprop; backward: dgrad, each before its wgrad): communication in phase `comm`,
/// kernels in `compute`.
void overlapped_block(CpStage& stage, const KernelCosts& run, const BlockSites& sites, bool fwd,
                      std::uint32_t comm, std::uint32_t compute);

}  // namespace hopsim::work
