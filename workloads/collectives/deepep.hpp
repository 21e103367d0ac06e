// DeepEP's defaults for its normal (high-throughput) kernels, by EP size.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/units.hpp"

namespace hopsim::work {

/// What DeepEP's normal kernels reach on a cluster, beyond its links.
struct DeepEpModel {
  /// The share of NVLink bandwidth its forwarding and gathering reach with `sms` SMs (its
  /// internode kernels forward on a few warps per SM: the rate is the SMs', not the links');
  /// 1: the links' full achievable rate.
  double nvlink_efficiency = 1.0;
  int sms = 24;  ///< the SMs its kernels held where nvlink_efficiency was fitted (DeepEP's default)
  /// How its SM-bound rate grows with the SMs it holds: rate ~ SMs^sm_exponent
  double sm_exponent = 0.85;
  /// The low-latency kernels' own time per call beyond their messages' (launch, the sender's
  /// cast and layout, the receiver's polling; combine's weighted sum of each token's results),
  /// paid once before the messages leave; 0: none.
  Time ll_dispatch_call{};
  Time ll_combine_call{};
  /// The normal kernels' fixed costs before each dispatch that makes a new layout (a forward
  /// dispatch; backward reuses its handle): `get_dispatch_layout`'s kernel, and the notify
  /// (the ranks swap their counts and the host waits for them, before it can size the receive
  /// buffers) when the exchange crosses nodes; 0: none.
  Time layout_call{};
  Time notify_call{};
  /// DeepEP's intranode kernels (every rank on one node: its intranode.cu, not the internode
  /// forwarding above) copy `intranode_GBps_per_sm` per SM they hold, up to
  /// `intranode_link_share` of the NVLink rate the links carry (`nvlink_GBps`, the cluster's):
  /// the rate rises with the SMs, then saturates at the links. 0 per SM: the links' share alone.
  double intranode_GBps_per_sm = 0;
  double intranode_link_share = 1.0;
  double nvlink_GBps = 0;  ///< what the cluster's NVLink carries per direction (its parse sets it)

  /// The share of NVLink bandwidth forwarding reaches with `comm_sms` SMs (0: `sms`), at most 1.
  double forward_efficiency(std::int64_t comm_sms) const {
    if (comm_sms <= 0 || comm_sms == sms) {
      return nvlink_efficiency;
    }
    const double ratio = static_cast<double>(comm_sms) / static_cast<double>(sms);
    return std::min(1.0, nvlink_efficiency * std::pow(ratio, sm_exponent));
  }

  /// The share of NVLink's rate the intranode kernels reach with `comm_sms` SMs (0: `sms`):
  /// min(intranode_link_share, SMs x intranode_GBps_per_sm / nvlink_GBps).
  double intranode_efficiency(std::int64_t comm_sms) const {
    if (intranode_GBps_per_sm <= 0 || nvlink_GBps <= 0) {
      return intranode_link_share;
    }
    const double held = static_cast<double>(comm_sms > 0 ? comm_sms : sms);
    return std::min(intranode_link_share, held * intranode_GBps_per_sm / nvlink_GBps);
  }
};

/// The low-latency kernel's own time per call, combine's or dispatch's; none without DeepEP's
/// figures (null).
inline Time ll_call_time(const DeepEpModel* deepep, bool combine) {
  if (deepep == nullptr) {
    return Time{};
  }
  return combine ? deepep->ll_combine_call : deepep->ll_dispatch_call;
}

/// Tokens per InfiniBand chunk of DeepEP's internode dispatch (or combine), the
/// `num_max_rdma_chunked_send_tokens` of `Buffer.get_dispatch_config` / `get_combine_config`
/// (deepseek-ai/DeepEP, deep_ep/buffer.py at commit 04b06f7): 16 ranks 20 (combine 28), 24 and
/// 32 ranks 32 (20), 64 ranks 28 (20), 128 ranks 32 (12), 144 and 160 ranks 12 (8). Sizes between
/// take the nearest smaller one; up to 8 ranks nothing crosses InfiniBand (returns 0).
inline std::int64_t deepep_chunk_tokens(std::int64_t ranks, bool combine) {
  struct Row {
    std::int64_t ranks;
    std::int64_t dispatch;
    std::int64_t combine;
  };
  constexpr Row kRows[] = {{16, 20, 28},  {24, 32, 20},  {32, 32, 20}, {64, 28, 20},
                           {128, 32, 12}, {144, 12, 8}, {160, 12, 8}};
  std::int64_t tokens = 0;
  for (const Row& r : kRows) {
    if (ranks >= r.ranks) {
      tokens = combine ? r.combine : r.dispatch;
    }
  }
  return tokens;
}

}  // namespace hopsim::work
