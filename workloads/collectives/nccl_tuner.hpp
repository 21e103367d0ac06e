// NCCL's tuner: the algorithm and protocol NCCL would pick for a collective, from its cost
// model (time = latency + bytes / bandwidth, nccl_model.hpp), with this cluster's bandwidths.
#pragma once

#include <string_view>
#include <vector>

#include "sim/units.hpp"
#include "workloads/collectives/nccl_model.hpp"

namespace hopsim::work {

enum class NcclColl : std::uint8_t { AllReduce, AllGather, ReduceScatter };
enum class NcclAlgo : std::uint8_t { Ring, Tree, Nvls };

/// "ring", "tree", "nvls".
std::string_view nccl_algo_name(NcclAlgo a);

/// What the tuner sees of a collective and its cluster.
struct TunerInput {
  NcclColl coll = NcclColl::AllReduce;
  int ranks = 2;
  int nodes = 1;
  Bytes size;            ///< nccl-tests size: bytes per rank
  Bandwidth nvlink;      ///< per GPU and direction, as the links carry
  Bandwidth node_nics;   ///< the NICs of one node together, per direction
};

struct Prediction {
  NcclAlgo algorithm = NcclAlgo::Ring;
  Protocol protocol = Protocol::Simple;
  double latency_s = 0;
  double bandwidth_Bps = 0;  // NOLINT(readability-identifier-naming): algorithm bandwidth, B/s
  double time_s = 0;
};

/// Every algorithm and protocol NCCL could use here, with its predicted time:
///   ring  bus bandwidth = NVLink inside a node; min(NVLink, the node's NICs) across nodes;
///         times the protocol's efficiency; algorithm bandwidth = bus x ranks / steps;
///   tree  (all-reduce) bus bandwidth x 0.92, algorithm bandwidth half of it (NCCL's factors);
///   nvls  (all-reduce in one node, where supported) NVLink x the NVLS efficiency.
std::vector<Prediction> nccl_predictions(const NcclModel& nccl, const TunerInput& in);

/// The fastest of `candidates` (the first among equals).
Prediction fastest(const std::vector<Prediction>& candidates);

}  // namespace hopsim::work
