// Collectives as small DAGs of flows appended to a plan (no events, no state: data only).
//
// How a collective flow is paid (NCCL's pipelined model): it moves its bytes as soon as its
// inputs have arrived and the flow before it on its link has moved its bytes; its hop latency
// (NCCL's, by protocol and by whether it stays in the node) is paid on arrival, as a pipeline
// delay. So flows queued on one link overlap their latencies with each other's bytes, and a
// collective's latency is the hop latencies along its longest chain, as NCCL's cost model has it.
//
// Closed forms on a uniform topology (hop latency a, bandwidth B per GPU, n ranks, S bytes per
// rank in the nccl-tests "size" convention, t = ceil(ceil(S/n)/k) / B with k chunks), after the
// base latency paid once:
//   send_recv                 a + S / B
//   all_gather, ring          a + max((n-2)(a+t) + k t, (n-1) k t)   (k = 1: (n-1)(a + t))
//   reduce_scatter, ring      the same
//   all_reduce, ring          the same with 2(n-1) steps for n-1
//   all_gather, direct        a + (n-1) ceil(S/n) / B                (every rank to all others)
//   all_to_all, flat          a + (n-1) (S/n) / B                    (a non-blocking switch)
// Across nodes a ring runs as `channels` rings, rail-aligned (each crosses node boundaries on
// its own NIC), each carrying 1/channels of the data, as NCCL's channels do.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "topology/cluster.hpp"
#include "workloads/collectives/nccl_model.hpp"
#include "workloads/plan/plan.hpp"

namespace hopsim::work {

/// The tasks whose completion completes a collective; feed them to the next one's `after`.
struct Handle {
  std::vector<PlanTaskId> done;
};

/// A per-pair byte matrix over n ranks, row-major: bytes[i * n + j] goes from rank i to j.
struct ByteMatrix {
  std::size_t n = 0;
  std::vector<std::int64_t> bytes;
  std::int64_t at(std::size_t i, std::size_t j) const { return bytes[i * n + j]; }
};

/// Two-tier input: what each GPU needs from each GPU, and the distinct bytes each GPU sends to
/// each *node* (a token wanted by several GPUs of one node crosses InfiniBand once).
struct TwoTierMatrix {
  ByteMatrix gpu;                     ///< n x n
  std::size_t nodes = 0;
  std::vector<std::int64_t> to_node;  ///< n x nodes: distinct bytes from rank i to node k
  /// n x n: bytes of every (token, expert) selection, a token counted once per expert it
  /// chose on a GPU (what messages per selection carry); empty where no routing made it.
  ByteMatrix selections;
};

/// How a ring runs: protocol, pieces per step, rings in parallel.
struct RingOptions {
  Protocol protocol = Protocol::Simple;
  int chunks = 1;
  int channels = 1;  ///< rings; each carries 1/channels of the data
  /// Stepped (false): every step of every rank is its own flow, after the step before it on
  /// the rank's link and the piece its left neighbour sent: n x steps x chunks flows. Streamed
  /// (true): each rank sends its steps' pieces to its right as one flow, and they arrive after
  /// the hop latencies the data passes on its way round (steps hops): n flows, the same time
  /// as stepped when every hop is alike (the ranks of a DP group on nodes of their own), and a
  /// training step's gradient sync over thousands of DP ranks costs O(n), not O(n^2).
  bool streamed = false;
};

/// How a two-tier exchange's pieces become flows. Each: every InfiniBand piece and every
/// NVLink forward (gather) of it is its own flow, as DeepEP's kernels send them. Streamed: per
/// node pair, the first stage is its first piece and then the rest as one flow, and the second
/// stage starts after that first piece and ends with the last piece as its own flow: 16 flows
/// per node pair instead of 8 per piece; DeepSeek-V3 layers come out within about 1% of Each,
/// a little fast (docs/collectives.md).
enum class Pieces : std::uint8_t { Each, Streamed };
/// The config names of Pieces, in enum order.
inline constexpr std::array<std::string_view, 2> kPieceNames{"each", "streamed"};
inline std::string_view pieces_name(Pieces p) { return kPieceNames[static_cast<std::size_t>(p)]; }

/// How a two-tier all-to-all runs.
struct TwoTierOptions {
  bool combine = false;       ///< the reverse: gather over NVLink, reduce, cross IB once
  std::int64_t chunk_bytes = 0;  ///< IB transfers in pieces of this many bytes; 0: one piece
  double nvlink_efficiency = 1.0;  ///< NVLink flows move payload / this (DeepEpModel)
  Pieces pieces = Pieces::Each;
  /// The same for an exchange within one node (DeepEP's intranode kernels, not its forwarding).
  double intranode_efficiency = 1.0;
};

/// A fixed cost of one call (a library's setup kernel, a host-side wait), by its label.
struct CallCost {
  std::string_view label;
  Time time{};
};

/// How an EP library that a data file prices runs one exchange (all_to_all_paced): its fixed
/// time per call, and the rates its messages reach per GPU and direction on each kind of link
/// (0: the link's own).
struct PacedOptions {
  bool combine = false;
  Time call{};
  Bandwidth nvlink{};
  Bandwidth nic{};
};

class Collectives {
 public:
  Collectives(Plan& plan, const topo::Cluster& cluster, const NcclModel& nccl,
              std::uint32_t phase = 0)
      : plan_(plan), cluster_(cluster), nccl_(nccl), phase_(phase) {}

  Handle send_recv(topo::GpuId src, topo::GpuId dst, Bytes size,
                   Protocol protocol = Protocol::Simple, std::span<const PlanTaskId> after = {});
  /// A ring of `steps` steps (n-1: all-gather, reduce-scatter; 2(n-1): all-reduce).
  Handle ring(std::span<const topo::GpuId> ranks, int steps, Bytes size, const RingOptions& options,
              std::span<const PlanTaskId> after = {});
  /// NCCL's tree all-reduce: per channel two mirrored binary trees over the nodes, a chain
  /// through each node's GPUs from the channel's leader; reduce up, broadcast down, in
  /// `chunks` pipelined pieces.
  Handle all_reduce_tree(std::span<const topo::GpuId> ranks, Bytes size, const RingOptions& options,
                         std::span<const PlanTaskId> after = {});
  /// NVLS all-reduce inside one node: the NVSwitch reduces; each GPU sends and receives its
  /// data once, at the NVLS efficiency of its links.
  Handle all_reduce_nvls(std::span<const topo::GpuId> ranks, Bytes size,
                         std::span<const PlanTaskId> after = {});
  Handle all_gather_direct(std::span<const topo::GpuId> ranks, Bytes size,
                           std::span<const PlanTaskId> after = {});
  /// Every pair (i, j), i != j, with bytes > 0 becomes one flow, all at once.
  Handle all_to_all_flat(std::span<const topo::GpuId> ranks, const ByteMatrix& m,
                         std::span<const PlanTaskId> after = {});
  /// Dispatch: data for another node crosses InfiniBand once, to the GPU of the same local
  /// index there, which forwards it over NVLink, piece by piece as pieces land. Combine: the
  /// reverse, reducing at that GPU before crossing back.
  Handle all_to_all_two_tier(std::span<const topo::GpuId> ranks, const TwoTierMatrix& m,
                             const TwoTierOptions& options, std::span<const PlanTaskId> after = {});

  /// DeepEP's low-latency kernels: every selection is its own RDMA message straight to the
  /// expert's GPU through the NICs, no NVLink forwarding, no deduplication, even inside a node
  /// (one flow per pair carries its messages). Combine sends the results back the same way.
  /// The messages leave `call` after `after` (the kernels' own time per call, DeepEpModel).
  Handle all_to_all_low_latency(std::span<const topo::GpuId> ranks, const ByteMatrix& selections,
                                bool combine, std::span<const PlanTaskId> after = {},
                                Time call = {});

  /// A library's SMs at work: on every rank with a nonzero time, that time held on its stream
  /// "ep_sms" (labelled "sm_bound", counted as communication; beside the comm stream that its
  /// floor holds) after `after`; returns those tasks.
  std::vector<PlanTaskId> sm_time(std::span<const topo::GpuId> ranks, std::span<const Time> times,
                                  std::span<const PlanTaskId> after);

  /// A library's fixed costs per call: on every rank, each nonzero cost in order as its own
  /// labelled task holding the comm stream (counted as communication), after `after`; returns
  /// the tasks after which each rank's costs are paid.
  std::vector<PlanTaskId> call_costs(std::span<const topo::GpuId> ranks,
                                     std::span<const CallCost> costs,
                                     std::span<const PlanTaskId> after);

  /// An EP library's exchange as its data file prices it: after `call`, every pair's bytes as
  /// one flow on its route (NVLink within a node, the NICs across), moving at the library's
  /// rate for that kind of link over the links' own (at most 1: never faster than the links).
  /// Combine sends each pair's bytes back. On a non-blocking fabric, where one GPU's sends on
  /// one kind of link bind: call + bytes / rate.
  Handle all_to_all_paced(std::span<const topo::GpuId> ranks, const ByteMatrix& m,
                          const PacedOptions& options, std::span<const PlanTaskId> after = {});

  /// The same for a library that crosses the NICs once per destination node and forwards over
  /// NVLink there (HybridEP, UCCL-EP's normal kernels): each GPU sends its distinct bytes for
  /// every other node (m.to_node) to its same-rail GPU there, which forwards each GPU's share
  /// (m.gpu) over NVLink; bytes within its node go straight over NVLink. Every pair's bytes,
  /// relayed or not, are one flow after `call`, all at once (the library pipelines its
  /// forwarding), at the library's rates as all_to_all_paced; where a node has no same-rail
  /// GPU, the bytes go straight. Combine runs each flow backwards.
  Handle all_to_all_paced_relayed(std::span<const topo::GpuId> ranks, const TwoTierMatrix& m,
                                  const PacedOptions& options,
                                  std::span<const PlanTaskId> after = {});

  /// The uniform matrix of an nccl-tests all-to-all of `size` bytes per rank.
  static ByteMatrix uniform(std::size_t n, Bytes size);
  /// Two-tier input where every byte for a node is distinct (no token wanted twice there).
  static TwoTierMatrix without_dedup(std::span<const topo::GpuId> ranks,
                                     const topo::Cluster& cluster, ByteMatrix gpu);
  /// The rank order of each of `channels` rings over `ranks`: one ring in the given order when
  /// they share a node; else rail-aligned rings whose channel c enters every node at its
  /// (c mod m)-th GPU by local index, so that each channel crosses nodes on its own NIC.
  static std::vector<std::vector<topo::GpuId>> channel_rings(std::span<const topo::GpuId> ranks,
                                                             const topo::Cluster& cluster,
                                                             int channels);

  /// The byte ranges [from, from + size) of a two-tier node pair's flows per stage, in order:
  /// the pieces in both, or streamed, the first stage's first piece and the rest, and the
  /// second stage's all but the last piece and the last.
  struct Segment {
    std::int64_t from;
    std::int64_t size;
  };
  struct Stages {
    std::vector<Segment> first;
    std::vector<Segment> second;
  };
  static Stages stages(std::int64_t total, const TwoTierOptions& options);

 private:
  /// A flow and the instant its data has arrived (after its hop latency).
  struct Hop {
    PlanTaskId sent;
    PlanTaskId arrived;
  };

  Plan& plan_;
  const topo::Cluster& cluster_;
  const NcclModel& nccl_;
  std::uint32_t phase_;

  /// The base latency, once per collective, after `after`.
  PlanTaskId start(const HopLatency& latency, std::span<const PlanTaskId> after);
  /// A flow of `bytes` payload after `after`, whose data arrives `latency`'s hop latency after
  /// its last byte; it moves bytes / efficiency on the wire.
  /// A flow after `after` (its latency left out), then `arrival` on `dst` before the data
  /// counts as there: the shape of every hop below.
  Hop flow_hop(topo::GpuId src, topo::GpuId dst, std::int64_t bytes,
               std::span<const PlanTaskId> after, Time arrival, std::string_view label,
               double efficiency);
  Hop hop(topo::GpuId src, topo::GpuId dst, std::int64_t bytes, std::span<const PlanTaskId> after,
          const HopLatency& latency, std::string_view label, double efficiency = 1.0);
  /// The same, paying its route's latency (links and software overhead) instead of NCCL's.
  Hop route_hop(topo::GpuId src, topo::GpuId dst, std::int64_t bytes,
                std::span<const PlanTaskId> after, std::string_view label, double efficiency = 1.0);
  /// One source's data for one remote node of a two-tier exchange: indices in ranks of the
  /// source and of the relay (its same-rail GPU there), and the distinct InfiniBand bytes.
  struct NodeSend {
    std::size_t from;
    std::size_t relay;
    std::size_t slot;
    std::int64_t ib_bytes;
  };

  void dispatch_through(std::span<const topo::GpuId> ranks, const TwoTierMatrix& m,
                        std::span<const std::size_t> members, const NodeSend& send,
                        const TwoTierOptions& options, PlanTaskId first, Handle& h);
  void combine_through(std::span<const topo::GpuId> ranks, const TwoTierMatrix& m,
                       std::span<const std::size_t> members, const NodeSend& send,
                       const TwoTierOptions& options, PlanTaskId first, Handle& h);
  void one_ring(std::span<const topo::GpuId> ranks, int steps, std::int64_t bytes, int chunks,
                Protocol protocol, PlanTaskId start, Handle& done);
  void one_streamed_ring(std::span<const topo::GpuId> ranks, int steps, std::int64_t bytes,
                         Protocol protocol, PlanTaskId start, Handle& done);
  void one_tree(const std::vector<std::vector<topo::GpuId>>& chains, bool mirrored,
                std::int64_t bytes, const RingOptions& options, PlanTaskId start, Handle& done);
};

}  // namespace hopsim::work
