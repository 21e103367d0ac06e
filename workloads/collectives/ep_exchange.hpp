// One EP exchange as an algorithm's builder and flow bound see it (ep_algorithms.hpp): its
// direction, its ranks and bytes, its pieces, the libraries' constants, and what a library's
// kernels reach from them.
#pragma once

#include <cstdint>
#include <span>

#include "workloads/collectives/collectives.hpp"
#include "workloads/collectives/deepep.hpp"
#include "workloads/collectives/ep_library_rates.hpp"

namespace hopsim::work {

/// An exchange's direction: dispatch sends each token to its experts' GPUs, combine sends the
/// results back (in backward, the gradients travel the same two ways).
enum class ExchangeOp : std::uint8_t { Dispatch, Combine };

/// The EP libraries' constants as the cluster gives them, one member per library that has any
/// (DeepEP's: the cluster's `deepep` section; its defaults reach the links' full rate): the
/// experiment holds them, a job's environment carries them, each row's `reach` reads its own.
/// A library whose constants a cluster sets adds its member here, its keys
/// (tools/config/keys/) and their parse (tools/config/cluster_config.cpp). The libraries a
/// data file prices (EpAlgorithmRow::data_file) are in `files`, for the cluster's GPU.
struct LibraryConstants {
  DeepEpModel deepep;
  LibraryFiles files;
};

/// What a library's kernels reach in one exchange beyond the links: the share of NVLink's rate
/// its forwarding moves at (1: the links' rate), its own time per call before the messages
/// leave (launch, layout, polling; 0: none), and the share of NVLink's rate it moves at when
/// every rank is on one node (DeepEP's intranode kernels).
struct KernelReach {
  double nvlink_share = 1.0;
  Time call{};
  double intranode_share = 1.0;
  /// Fixed costs per call that run as their own tasks on every rank before the exchange, when
  /// it makes a new layout (Exchange::new_layout): DeepEP normal's layout kernel, and its
  /// notify with the host's wait when the exchange crosses nodes (DeepEpModel).
  Time layout{};
  Time notify{};
  /// A library a data file prices: its costs on the cluster's GPU (paced_exchange reads the
  /// path and op); null: none.
  const LibraryRates* rates = nullptr;
};

/// One exchange over one EP group. `bytes` is in dispatch's direction whatever `op`: row i,
/// column j, what rank i's tokens bring rank j's experts (combine sends it back, j to i).
struct Exchange {
  std::span<const topo::GpuId> ranks;
  const TwoTierMatrix& bytes;
  ExchangeOp op = ExchangeOp::Dispatch;
  std::int64_t chunk_bytes = 0;  ///< chunked rows: bytes per InfiniBand piece; 0: one piece
  Pieces pieces = Pieces::Each;  ///< chunked rows: how the pieces become flows
  std::int64_t comm_sms = 0;     ///< SMs the kernels hold; 0: the library's own count
  LibraryConstants constants;
  std::span<const PlanTaskId> after;
  /// A forward dispatch in a layer, which computes a new layout and pays the library's fixed
  /// costs per call (KernelReach::layout, notify); false: a backward exchange reusing its
  /// handle, or a benchmark's exchange (DeepEP's tests time the transfer kernels alone).
  bool new_layout = false;
  /// Bytes per token in this exchange (hidden x bytes per element), and the routed experts:
  /// what Megatron's dispatchers move beside the tokens (token counts, probabilities, the
  /// routing map) is sized from them; 0: unknown, none moved (a benchmark's exchange).
  std::int64_t token_bytes = 0;
  std::int64_t experts = 0;
  /// Each rank's own tokens' bytes before routing, what an all-gather dispatcher gathers;
  /// 0: the routing matrix's mean row (a benchmark's size per rank).
  std::int64_t own_bytes = 0;
  /// Bytes of one token as this exchange moves it (hidden x bytes per element), for a library
  /// whose SMs pay a cost per (token, node) pair (PathCost::sm_pair); 0: unknown, none paid.
  std::int64_t token_size = 0;
};

/// What a flow bound reads: the ranks of one exchange, GPUs per node, and for chunked rows the
/// InfiniBand pieces of one (source, node) pair and whether they are streamed.
struct ExchangeShape {
  double ranks = 0;
  double gpus_per_node = 1;
  double pieces = 1;
  bool streamed = false;
};

/// A set of ExchangeOps, one bit each.
constexpr std::uint8_t exchange_op_bit(ExchangeOp op) {
  return static_cast<std::uint8_t>(1U << static_cast<unsigned>(op));
}

inline constexpr std::uint8_t kBothOps =
    exchange_op_bit(ExchangeOp::Dispatch) | exchange_op_bit(ExchangeOp::Combine);

}  // namespace hopsim::work
