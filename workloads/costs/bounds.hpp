// Bounds a job's plan must stay within before it is built: simulated time that fits in Time,
// byte totals that fit in Bytes. Above them a run would overflow; a job reports a problem.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/units.hpp"
#include "topology/spec.hpp"
#include "workloads/collectives/nccl_model.hpp"

namespace hopsim::work {

/// The most tasks a layer workload's plan may hold (about 10 GB of plan and run state).
inline constexpr double kMaxPlanTasks = 5e7;
/// What one task of a layer workload's plan takes to build and simulate (the plan, its run
/// state), bytes, and one flow (its route and share of the flow network too); measured as peak
/// RSS less the cluster's: an attention layer's plan (Llama 3 405B, CP 16 x TP 8, 100 layers:
/// 0.73 GB), a MoE layer's streamed exchanges (DeepSeek-V3 EP64, 12 layers, 183K flows:
/// 0.14 GB) and a 100,000-GPU data-parallel step's DP syncs (3.2M flows: 1.65 GB).
inline constexpr double kBytesPerPlanTask = 200;
inline constexpr double kBytesPerPlanFlow = 550;
/// The most compute time per GPU (roofline) a layer workload may ask for, seconds.
inline constexpr double kMaxComputeSeconds = 1e5;

/// What a plan asks of the network, counted generously.
struct PlanLoad {
  double flows = 0;         ///< flows in the plan
  double bytes = 0;         ///< bytes of all flows together
  Time flow_latency;        ///< the longest latency one flow pays
  Time fixed;               ///< time outside flows: start times, base latencies
};

/// The longest `load` can take: while any flow moves bytes some link is saturated (max-min), so
/// all flows together move at least the slowest link's capacity; latencies may add up in
/// series. Seconds, as a double (it may exceed what Time holds).
double time_bound_s(const PlanLoad& load, const topo::Spec& cluster);

/// The load of a layer workload: `flows` flows (each may pay any NCCL hop latency and base
/// latency of `nccl`, or the longest route's), `bytes` in all, after `compute_s` of compute.
PlanLoad layer_load(double flows, double bytes, double compute_s, const topo::Spec& cluster,
                    const NcclModel& nccl);

/// Why `load` cannot be simulated (its time or bytes overflow), or nullopt; the message starts
/// with `subject` ("these flows").
std::optional<std::string> load_problem(const PlanLoad& load, const topo::Spec& cluster,
                                        std::string_view subject);

/// The longest latency of a flow in `cluster` (software overhead and a route's links).
Time longest_route_latency(const topo::Spec& cluster);

/// Why `hidden` elements of `bytes_per_element` each make a token of no whole byte (it rounds to
/// 0: an exchange of nothing in no time), or nullopt.
std::optional<std::string> token_bytes_problem(std::int64_t hidden, double bytes_per_element);

}  // namespace hopsim::work
