// Attention kernels' efficiency by call size (attention_kernel.hpp).
#include "workloads/compute/attention_kernel.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "sim/assert.hpp"
#include "workloads/compute/attention_rows.hpp"
#include "workloads/compute/enum_names.hpp"

namespace hopsim::work {
namespace {

constexpr std::array<std::string_view, 6> kNames{"auto", "fa2", "fa3", "cudnn", "sdpa_flash",
                                                 "flex"};

constexpr double kH100PeakTflops = 989.4;  // the dense BF16 peak the rates are a share of
constexpr double kH100Sms = 132;
// Those benchmarks' grid: 16 heads x (16384 / s) sequences x s / 128 tiles = 2048 blocks.
constexpr double kPublishedBlocks = 2048;
constexpr double kTileRows = 128;

// Half a 128-key tile of each query row's diagonal is masked but computed.
double diagonal(double mean_keys) {
  return mean_keys / (mean_keys + kTileRows / 2);
}

// What a kernel's causal mask costs beyond its diagonal tiles (scheduling the triangle):
// fitted on its causal forward at 16K (L = 8192.5 keys per row), where the diagonal alone
// leaves FA3 3% fast and FA2 and cuDNN 9% fast. The backward takes the forward's.
double causal_penalty(AttentionKernel kernel) {
  const AttentionRow& p = attention_row(kernel);
  const double l = (16384.0 + 1) / 2;
  const double model = attention_rate_share(kernel, false, l) * diagonal(l) *
                       whole_waves(kPublishedBlocks, kH100Sms) * kH100PeakTflops;
  return p.causal_fwd_16k / model;
}

}  // namespace

std::string_view attention_kernel_name(AttentionKernel k) {
  return kNames[static_cast<std::size_t>(k)];
}

std::optional<AttentionKernel> attention_kernel_named(std::string_view name) {
  return enum_named<AttentionKernel>(kNames, name);
}

std::int64_t attention_blocks(std::int64_t bh, std::int64_t rows) {
  return bh * ((rows + static_cast<std::int64_t>(kTileRows) - 1) /
               static_cast<std::int64_t>(kTileRows));
}

double whole_waves(double blocks, double sms) {
  return blocks / (std::ceil(blocks / sms) * sms);
}

SplitKv split_kv(std::int64_t kv_heads, std::int64_t gqa, std::int64_t s_q, std::int64_t s_kv,
                 std::int64_t sms) {
  const auto tile = static_cast<std::int64_t>(kTileRows);
  const std::int64_t m_blocks = kv_heads * ((s_q * gqa + tile - 1) / tile);
  const std::int64_t n_blocks = (s_kv + tile - 1) / tile;
  SplitKv out;
  if (static_cast<double>(m_blocks) >= 0.8 * static_cast<double>(sms) || n_blocks <= 4) {
    return out;
  }
  const std::int64_t most = std::min({std::int64_t{128}, sms, n_blocks});
  std::vector<double> share;
  for (std::int64_t n = 1; n <= most; ++n) {
    share.push_back(whole_waves(static_cast<double>(m_blocks * n), static_cast<double>(sms)));
  }
  const double best = *std::max_element(share.begin(), share.end());
  for (std::size_t i = 0; i < share.size(); ++i) {
    if (share[i] >= 0.85 * best) {
      out.splits = static_cast<std::int64_t>(i) + 1;
      break;
    }
  }
  if (out.splits > 1) {
    out.blocks = m_blocks * out.splits;
  }
  return out;
}

bool splits_keys(AttentionKernel kernel) {
  return kernel == AttentionKernel::Auto || kernel == AttentionKernel::Fa3;
}

double attention_rate_share(AttentionKernel kernel, bool backward, double mean_keys) {
  HOPSIM_ASSERT(mean_keys > 0, "mean keys per query row must be positive, got {}", mean_keys);
  const AttentionRow& p = attention_row(kernel);
  // The published bars include their own waves; take them out, so that the curve is the
  // rate of a GPU kept busy.
  const double w = whole_waves(kPublishedBlocks, kH100Sms) * kH100PeakTflops;
  const double short_share = (backward ? p.bwd_512 : p.fwd_512) / w;
  const double long_share = (backward ? p.bwd_16k : p.fwd_16k) / w;
  // time / FLOP = a + b / L through (512, short) and (16384, long).
  const double b = (1 / short_share - 1 / long_share) / (1.0 / 512 - 1.0 / 16384);
  const double a = 1 / long_share - b / 16384;
  return 1 / (a + b / mean_keys);
}

double attention_efficiency(AttentionKernel kernel, const AttentionKernelCall& call, double scale,
                            std::int64_t sm_count) {
  HOPSIM_ASSERT(call.blocks >= 1 && sm_count >= 1, "attention call of {} blocks on {} SMs",
                call.blocks, sm_count);
  double share = attention_rate_share(kernel, call.backward, call.mean_keys);
  if (call.causal) {
    share *= diagonal(call.mean_keys) * causal_penalty(kernel);
  }
  const double d = static_cast<double>(std::clamp<std::int64_t>(call.d_qk, 64, 128));
  share *= 0.767 + (1 - 0.767) * (d - 64) / 64;  // FA3 Fig. 5a: 497 / 648 at d = 64
  share *= whole_waves(static_cast<double>(call.blocks), static_cast<double>(sm_count));
  return std::min(1.0, share * scale / kAttentionReference);
}

}  // namespace hopsim::work
