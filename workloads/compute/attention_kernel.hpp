// Attention kernels by implementation: which calibration tables may time a call, and the
// roofline's efficiency by call size where none does.
//
// A FlashAttention-style kernel streams the keys past each tile of queries, so its time is
// work at a saturated rate plus a fixed cost per query row (load Q, softmax rescaling, write O):
//   time / FLOP = a + b / L,   i.e.   rate(L) = rate_inf L / (L + L0),
// with L the keys a query row attends on average (s_kv without a mask, about half with a causal
// one). rate_inf and L0 = b / a come in closed form from two published points per kernel and
// pass, its 512- and 16K-token bars (H100 SXM, BF16, head dim 128, non-causal, 16 heads x 16K
// tokens: the FlashAttention-3 paper's Figs. 5-6 setup; attention_rows.hpp lists each
// kernel's and its source). Effects the fit does not see:
//   causal  the diagonal tile of each query tile runs in full but counts half: x L / (L + 64)
//           (64 = half of a 128-key tile); and a kernel's further causal cost, one factor
//           fitted on its causal forward bar at 16K (FA3 0.97, FA2 and cuDNN 0.92; SDPA's flash
//           backend and FlexAttention take FA2's), which its backward takes too;
//   waves   the grid of thread blocks (batch x heads x ceil(s / 128), over queries forward and
//           keys backward) in whole waves of the GPU's SMs: x blocks / (ceil(blocks / SMs) SMs).
//   split   FlashAttention-3's split-KV forward (hopper/heuristics.h, num_splits_heuristic): a
//           grid of fewer m-blocks than 0.8 x SMs (split_kv below) is cut along the keys so that
//           its blocks fill the waves; each split's query rows see 1/splits of the keys (the
//           fixed cost per row is paid once per split). Its combine kernel is not priced.
// Head dims below 128 run slower (FlashAttention-3 at d = 64 reaches 497 of d = 128's 648
// TFLOP/s, Fig. 5a): x between 0.767 at d_qk <= 64 and 1 at d_qk >= 128, linear in d_qk.
// The rates are H100 SXM's at 700 W; a cluster's gpu.attention_efficiency scales them by its
// ratio to kAttentionReference (0.6), so that a power-limited GPU slows every kernel alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace hopsim::work {

/// The attention kernel a framework runs. Auto: any calibration table answers, and the
/// roofline takes FlashAttention-3's rates (the fastest published on Hopper). SdpaFlash:
/// PyTorch SDPA's flash backend (TorchTitan's default); Flex: PyTorch's FlexAttention.
enum class AttentionKernel { Auto, Fa2, Fa3, Cudnn, SdpaFlash, Flex };

/// "auto", "fa2", "fa3", "cudnn", "sdpa_flash", "flex": as workloads and calibration tables'
/// `impl` name them.
std::string_view attention_kernel_name(AttentionKernel k);
/// The kernel of that name; nullopt for an unknown name.
std::optional<AttentionKernel> attention_kernel_named(std::string_view name);

/// gpu.attention_efficiency at which the published rates apply unscaled.
inline constexpr double kAttentionReference = 0.6;

/// One call, as the efficiency needs it.
struct AttentionKernelCall {
  bool backward = false;
  bool causal = false;
  double mean_keys = 0;           ///< L: attended (query, key) pairs over query rows
  std::int64_t d_qk = 128;
  std::int64_t blocks = 0;        ///< thread blocks in the grid
};

/// Achieved over the dense peak, for `kernel` on `call`, on a GPU of `sm_count` SMs whose
/// gpu.attention_efficiency is `scale`. In (0, 1].
double attention_efficiency(AttentionKernel kernel, const AttentionKernelCall& call, double scale,
                            std::int64_t sm_count);

/// Thread blocks of a call: bh x ceil(rows / 128) tiles, rows the queries forward and the keys
/// backward.
std::int64_t attention_blocks(std::int64_t bh, std::int64_t rows);
/// The share of SM time a grid of `blocks` keeps busy in whole waves of `sms` SMs.
double whole_waves(double blocks, double sms);

/// FlashAttention-3's split-KV forward for a call of `kv_heads` (batch x KV heads) with `gqa`
/// query heads each, s_q queries and s_kv keys, on `sms` SMs (Dao-AILab/flash-attention,
/// hopper/flash_api.cpp get_num_splits and hopper/heuristics.h num_splits_heuristic): the
/// m-blocks pack a KV head's query heads, kv_heads x ceil(s_q x gqa / 128); at 0.8 x sms or
/// more, or with 4 key blocks of 128 or fewer, one split; else the fewest splits (at most
/// 128, sms and the key blocks) whose whole-wave share reaches 85% of the best.
struct SplitKv {
  std::int64_t splits = 1;
  std::int64_t blocks = 0;  ///< m-blocks x splits (with one split: 0, the caller's own count)
};
SplitKv split_kv(std::int64_t kv_heads, std::int64_t gqa, std::int64_t s_q, std::int64_t s_kv,
                 std::int64_t sms);
/// Whether `kernel` splits a forward call's keys (FA3, and Auto, which takes FA3's rates).
bool splits_keys(AttentionKernel kernel);

/// The rate at L keys per query row, over the dense peak, before masks, waves and head dims.
double attention_rate_share(AttentionKernel kernel, bool backward, double mean_keys);

}  // namespace hopsim::work
