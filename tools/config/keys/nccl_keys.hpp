// The keys of a cluster's NCCL cost-model constants (latencies by algorithm and protocol,
// NVLS) and of what DeepEP's kernels reach on it.
#pragma once

#include <array>
#include <string_view>

#include "tools/config/key.hpp"
#include "tools/config/keys/cluster_keys.hpp"

namespace hopsim::config::keys::nccl {

/// The protocols' names, in work::kProtocols' order.
inline constexpr std::array<std::string_view, 3> kProtocolNames{"simple", "ll", "ll128"};

inline constexpr ChoiceKey kProtocol{.name = "protocol",
                                     .choices = kProtocolNames,
                                     .value = "simple",
                                     .doc = "the protocol collectives use unless they name one"};

inline constexpr ValueKey kRing{.name = "ring",
                                .type = "object",
                                .fallback = "NCCL 2.19+'s",
                                .doc = "ring latencies by protocol"};

inline constexpr ValueKey kTree{.name = "tree",
                                .type = "object",
                                .fallback = "NCCL 2.19+'s",
                                .doc = "tree latencies by protocol"};

inline constexpr ValueKey kNvls{.name = "nvls",
                                .type = "object",
                                .fallback = "none (no NVLS)",
                                .doc = "the NVSwitch reduces (NVLS all-reduce); its constants"};

inline constexpr NumberKey kP2pNetEfficiency = cluster::share(
    "p2p_net_efficiency",
    "the share of the NIC's rate send/recv between nodes reaches: context parallelism's "
    "ring and pipeline transfers (calibrated where published; "
    "docs/context-parallelism.md)",
    1);

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kProtocol, &kRing, &kTree, &kNvls, &kP2pNetEfficiency});
inline constexpr Section kSection{"cluster", "/nccl", "NCCL's cost-model constants", kKeys};

}  // namespace hopsim::config::keys::nccl

namespace hopsim::config::keys::nccl_algorithm {

inline constexpr ValueKey kSimple{.name = "simple",
                                  .type = "object",
                                  .fallback = kRequired,
                                  .doc = "latencies of the Simple protocol"};

inline constexpr ValueKey kLl{.name = "ll",
                              .type = "object",
                              .fallback = kRequired,
                              .doc = "latencies of LL (payload half of the wire bytes)"};

inline constexpr ValueKey kLl128{.name = "ll128",
                                 .type = "object",
                                 .fallback = kRequired,
                                 .doc = "latencies of LL128 (payload 120/128 of the wire bytes)"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kSimple, &kLl, &kLl128});
/// The keys in work::kProtocols' order.
inline constexpr std::array<const ValueKey*, 3> kByProtocol{&kSimple, &kLl, &kLl128};
inline constexpr Section kSection{"cluster", "/nccl/ring, /nccl/tree", "latencies by protocol",
                                  kKeys};

}  // namespace hopsim::config::keys::nccl_algorithm

namespace hopsim::config::keys::nccl_latency {

inline constexpr NumberKey kBaseLatencyUs =
    cluster::latency_us("base_latency_us", "once per collective");

inline constexpr NumberKey kNvlinkHopLatencyUs =
    cluster::latency_us("nvlink_hop_latency_us", "per step inside a node");

inline constexpr NumberKey kNetHopLatencyUs =
    cluster::latency_us("net_hop_latency_us", "per step across the network");

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kBaseLatencyUs, &kNvlinkHopLatencyUs, &kNetHopLatencyUs});
inline constexpr Section kSection{"cluster", "/nccl/ring/simple, ...", "one algorithm and protocol",
                                  kKeys};

}  // namespace hopsim::config::keys::nccl_latency

namespace hopsim::config::keys::nvls {

inline constexpr NumberKey kNvlinkLatencyUs =
    cluster::latency_us("nvlink_latency_us", "NVLS latency inside a node");

inline constexpr NumberKey kNetLatencyUs =
    cluster::latency_us("net_latency_us", "added when the ranks span nodes");

inline constexpr NumberKey kEfficiency = cluster::share(
    "efficiency",
    "NVLink bandwidth NVLS reaches, as a fraction of the links' (calibrated; see docs)");

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kNvlinkLatencyUs, &kNetLatencyUs, &kEfficiency});
inline constexpr Section kSection{"cluster", "/nccl/nvls", "NVLS (NVSwitch reduction)", kKeys};

}  // namespace hopsim::config::keys::nvls

namespace hopsim::config::keys::deepep {

inline constexpr NumberKey kNvlinkEfficiency = cluster::share(
    "nvlink_efficiency",
    "the share of NVLink bandwidth DeepEP's normal kernels forward and gather at with "
    "`sms` SMs (calibrated)");

inline constexpr IntegerKey kSms{
    .name = "sms",
    .lo = 1,
    .hi = cluster::kMaxSms,
    .value = 24,
    .doc = "the SMs DeepEP's kernels held where nvlink_efficiency was fitted (its default)"};

inline constexpr NumberKey kSmExponent{
    .name = "sm_exponent",
    .lo = 0,
    .hi = 2,
    .value = 0.85,
    .doc =
        "a MoE layer's comm_sms scale the forwarding rate by (comm_sms / sms)^sm_exponent, at"
        " most the links' rate (fitted on DeepEP's FP8 dispatch at 16 to 32 SMs, docs)"};

inline constexpr NumberKey kLlDispatchUs = cluster::latency_us(
    "ll_dispatch_us",
    "the low-latency dispatch kernel's own time per call beyond its messages' (calibrated"
    " on DeepEP's EP8 dispatch, docs)",
    0);

inline constexpr NumberKey kLlCombineUs = cluster::latency_us(
    "ll_combine_us",
    "the low-latency combine kernel's own time per call beyond its messages' (calibrated "
    "on DeepEP's EP8 combine, docs)",
    0);

inline constexpr NumberKey kLayoutUs = cluster::latency_us(
    "layout_us",
    "the normal kernels' layout kernel (get_dispatch_layout) before each forward dispatch, its "
    "own task in a MoE layer (published, docs)");

inline constexpr NumberKey kNotifyUs = cluster::latency_us(
    "notify_us",
    "the normal kernels' notify and the host's wait for its counts before each forward "
    "dispatch across nodes, its own task in a MoE layer (published, docs)");

inline constexpr NumberKey kIntranodeGBpsPerSm{
    .name = "intranode_GBps_per_sm",
    .sign = Sign::Positive,
    .unit = Unit::GBps,
    .fallback = kRequired,
    .doc = "what each SM DeepEP's intranode kernels hold copies over NVLink (EP within one node;"
           " fitted on a published H100 figure, docs)"};

inline constexpr NumberKey kIntranodeLinkShare = cluster::share(
    "intranode_link_share",
    "the most of NVLink's rate DeepEP's intranode kernels reach, however many SMs they hold "
    "(fitted on a published figure, docs)");

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kNvlinkEfficiency, &kSms, &kSmExponent, &kLlDispatchUs, &kLlCombineUs,
                           &kIntranodeGBpsPerSm, &kIntranodeLinkShare, &kLayoutUs, &kNotifyUs});
inline constexpr Section kSection{"cluster", "/deepep", "DeepEP's kernels", kKeys};

}  // namespace hopsim::config::keys::deepep
