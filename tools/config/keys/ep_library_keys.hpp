// The keys of an EP library's data file (configs/ep_libraries/NAME.json): per GPU model, per
// path and op, the library's fixed time per call and the rates it reaches per link kind.
#pragma once

#include <array>
#include <string_view>

#include "tools/config/key.hpp"
#include "tools/config/keys/cluster_keys.hpp"

namespace hopsim::config::keys::ep_library {

inline constexpr StringKey kLibrary{
    .name = "library", .fallback = kRequired, .doc = "the library's name, as reports print it"};

inline constexpr StringKey kDescription{
    .name = "description", .fallback = "none", .doc = "free text"};

inline constexpr ValueKey kGpus{
    .name = "gpus",
    .type = "object",
    .fallback = kRequired,
    .doc = "GPU model name (a cluster's gpu.name, \"H100 SXM\") -> its costs there; a cluster "
           "whose GPU has none cannot run the library"};

inline constexpr ValueKey kSources{.name = "sources",
                                   .type = "object",
                                   .fallback = "none",
                                   .doc = "JSON pointer -> citation, for every number of the file"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kLibrary, &kDescription, &kGpus, &kSources});
inline constexpr Section kSection{"EP library", "/", "an EP library (configs/ep_libraries/*.json)",
                                  kKeys};

}  // namespace hopsim::config::keys::ep_library

namespace hopsim::config::keys::ep_library_gpu {

inline constexpr ValueKey kIntranode{
    .name = "intranode",
    .type = "object",
    .fallback = kRequired,
    .doc = "its costs when every rank of the exchange is on one node"};

inline constexpr ValueKey kInternode{.name = "internode",
                                     .type = "object",
                                     .fallback = kRequired,
                                     .doc = "its costs when the exchange crosses nodes"};

inline constexpr IntegerKey kSms{
    .name = "sms",
    .lo = 1,
    .hi = cluster::kMaxSms,
    .fallback = "none",
    .doc = "the SMs its kernels hold by default (a workload's comm_sms 0), at which its rates "
           "were fitted; required where an op gives sm_GBps"};

inline constexpr StringKey kSameAs{
    .name = "same_as",
    .non_empty = true,
    .fallback = "none",
    .doc = "another GPU model of this file whose costs this one takes; the keys this entry "
           "gives besides (an op's, one by one) replace that GPU's"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kIntranode, &kInternode, &kSms, &kSameAs});
inline constexpr Section kSection{"EP library", "/gpus/<GPU>", "the library on one GPU model",
                                  kKeys};

}  // namespace hopsim::config::keys::ep_library_gpu

namespace hopsim::config::keys::ep_library_path {

/// In work::ExchangeOp's order.
inline constexpr std::array<std::string_view, 2> kOpNames{"dispatch", "combine"};

inline constexpr ValueKey kDispatch{.name = "dispatch",
                                    .type = "object",
                                    .fallback = kRequired,
                                    .doc = "tokens to their experts' GPUs"};

inline constexpr ValueKey kCombine{.name = "combine",
                                   .type = "object",
                                   .fallback = kRequired,
                                   .doc = "the experts' results back"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kDispatch, &kCombine});
inline constexpr Section kSection{"EP library", "/gpus/<GPU>/intranode, /internode",
                                  "one path's ops", kKeys};

}  // namespace hopsim::config::keys::ep_library_path

namespace hopsim::config::keys::ep_library_cost {

inline constexpr NumberKey kFloorUs = cluster::latency_us(
    "floor_us",
    "the fixed time of one call before its messages leave (launch, layout, signalling; fitted "
    "on a published case with few bytes, sources)");

/// A rate a library reaches per GPU and direction on one kind of link; required.
constexpr NumberKey rate(std::string_view name, std::string_view doc) {
  return {.name = name,
          .sign = Sign::Positive,
          .hi = 1e5,
          .unit = Unit::GBps,
          .fallback = kRequired,
          .doc = doc};
}

inline constexpr NumberKey kNvlinkGBps =
    rate("nvlink_GBps",
         "what its messages reach per GPU over NVLink (at most the link's own; fitted on a "
         "published case, sources)");

inline constexpr NumberKey kNicGBps =
    rate("nic_GBps",
         "what its messages reach per GPU through its NIC (at most the link's own; internode "
         "only; fitted on a published case, sources)");

inline constexpr NumberKey kNicPairGBps =
    rate("nic_pair_GBps",
         "what its messages reach through the NIC per remote rank they go to: the NIC rate is "
         "min(nic_GBps, remote ranks x nic_pair_GBps); a library that relays through one GPU "
         "per node (hybrid_ep, uccl_ep) counts the other nodes (internode only; fitted on a "
         "published case, sources)");

inline constexpr NumberKey kSmGBps{
    .name = "sm_GBps",
    .sign = Sign::Positive,
    .hi = 1e5,
    .unit = Unit::GBps,
    .fallback = "none: the SMs bind nothing",
    .doc = "the bytes one SM of its kernels moves per second: each GPU's exchange lasts at least "
           "its (token, destination node) pairs, its own node included, x sm_pair_us plus "
           "their bytes / sm_GBps, over the SMs held (comm_sms, else the GPU's sms); fitted on "
           "a published case at few SMs, sources"};

inline constexpr NumberKey kSmPairUs = cluster::latency_us(
    "sm_pair_us",
    "what one SM spends per (token, destination node) pair beyond its bytes (with sm_GBps; "
    "fitted on two published cases of one op with different bytes per token, sources)",
    0.0);

inline constexpr auto kIntranodeKeys =
    std::to_array<KeyRef>({&kFloorUs, &kNvlinkGBps, &kSmGBps, &kSmPairUs});
inline constexpr auto kInternodeKeys = std::to_array<KeyRef>(
    {&kFloorUs, &kNvlinkGBps, &kNicGBps, &kNicPairGBps, &kSmGBps, &kSmPairUs});
inline constexpr Section kIntranodeSection{"EP library", "/gpus/<GPU>/intranode/<op>",
                                           "one op within a node", kIntranodeKeys};
inline constexpr Section kInternodeSection{"EP library", "/gpus/<GPU>/internode/<op>",
                                           "one op across nodes", kInternodeKeys};

}  // namespace hopsim::config::keys::ep_library_cost
