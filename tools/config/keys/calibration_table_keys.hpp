// The keys of a calibration file's tables: each table, its axes, and its key per op.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tools/config/key.hpp"

namespace hopsim::config::keys::table {

inline constexpr std::array<std::string_view, 4> kOpNames{"gemm", "grouped_gemm", "attn", "memory"};
inline constexpr std::array<std::string_view, 2> kPassNames{"fwd", "bwd"};
inline constexpr std::array<std::string_view, 5> kFlopsNames{
    "gemm_v1", "grouped_gemm_v1", "attn_fwd_v1", "attn_bwd_v1", "bytes_v1"};
/// Axis values and integer key values: counts and extents, within the compute model's range.
inline constexpr std::int64_t kMaxExtent = std::int64_t{1} << 31;
inline constexpr std::array<std::string_view, 2> kDtypeNames{"bf16", "fp8"};
inline constexpr std::array<std::string_view, 2> kRoleNames{"wgrad", "dgrad"};

inline constexpr ChoiceKey kOp{.name = "op",
                               .choices = kOpNames,
                               .fallback = kRequired,
                               .doc = "the kernel family (memory: a memory-bound kernel class)"};

inline constexpr ChoiceKey kPass{
    .name = "pass", .choices = kPassNames, .fallback = kRequired, .doc = "forward or backward"};

inline constexpr StringKey kImpl{.name = "impl",
                                 .non_empty = true,
                                 .fallback = kRequired,
                                 .doc = "the kernel or library, e.g. \"cublaslt\""};

inline constexpr ValueKey kKey{.name = "key",
                               .type = "object",
                               .fallback = kRequired,
                               .doc = "categorical parameters (per op, below)"};

inline constexpr ValueKey kAxes{.name = "axes",
                                .type = "array of {name, values}",
                                .fallback = kRequired,
                                .doc = "the op's axes in order, values ascending"};

inline constexpr ChoiceKey kFlops{
    .name = "flops",
    .choices = kFlopsNames,
    .fallback = kRequired,
    .doc = "the FLOP formula of op and pass (memory: bytes_v1, the bytes it moves)"};

inline constexpr ValueKey kTimeUs{.name = "time_us",
                                  .type = "array of numbers > 0 or null",
                                  .unit = Unit::Microseconds,
                                  .fallback = kRequired,
                                  .doc = "row-major over axes"};

inline constexpr ValueKey kP10Us{.name = "p10_us",
                                 .type = "array like time_us",
                                 .unit = Unit::Microseconds,
                                 .fallback = "none",
                                 .doc = "10th percentile (at most the cell's p90_us)"};

inline constexpr ValueKey kP90Us{.name = "p90_us",
                                 .type = "array like time_us",
                                 .unit = Unit::Microseconds,
                                 .fallback = "none",
                                 .doc = "90th percentile"};

inline constexpr StringKey kSource{.name = "source",
                                   .non_empty = true,
                                   .fallback = "required in published files",
                                   .doc = "citation"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kOp, &kPass, &kImpl, &kKey, &kAxes, &kFlops, &kTimeUs, &kP10Us, &kP90Us, &kSource});
inline constexpr Section kSection{"calibration", "/tables/N", "one table", kKeys};

}  // namespace hopsim::config::keys::table

namespace hopsim::config::keys::axis {

inline constexpr StringKey kName{
    .name = "name",
    .fallback = kRequired,
    .doc =
        "gemm: m, n, k; grouped_gemm: experts, tokens_per_expert; attn: s_q, s_kv, bh; "
        "memory: bytes"};

inline constexpr IntegerKey kValues{.name = "values",
                                    .lo = 1,
                                    .hi = table::kMaxExtent,
                                    .shape = Shape::List,
                                    .fallback = kRequired,
                                    .doc = "strictly ascending"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kName, &kValues});
inline constexpr Section kSection{"calibration", "/tables/N/axes/M", "one axis", kKeys};

}  // namespace hopsim::config::keys::axis

namespace hopsim::config::keys::gemm_key {

inline constexpr std::array<std::string_view, 4> kLayoutNames{"NN", "NT", "TN", "TT"};

inline constexpr ChoiceKey kDtype{
    .name = "dtype", .choices = table::kDtypeNames, .fallback = kRequired, .doc = "input type"};

inline constexpr ChoiceKey kRole{
    .name = "role",
    .choices = table::kRoleNames,
    .fallback = "none",
    .doc = "which backward GEMM a bwd table times, at that GEMM's own m, n, k"};

inline constexpr ChoiceKey kLayout{
    .name = "layout", .choices = kLayoutNames, .fallback = "none", .doc = "descriptive"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kDtype, &kRole, &kLayout});
inline constexpr Section kSection{"calibration", "/tables/N/key (op gemm)", "GEMM key", kKeys};

}  // namespace hopsim::config::keys::gemm_key

namespace hopsim::config::keys::grouped_gemm_key {

inline constexpr ChoiceKey kDtype{
    .name = "dtype", .choices = table::kDtypeNames, .fallback = kRequired, .doc = "input type"};

inline constexpr IntegerKey kN{
    .name = "n", .lo = 1, .hi = table::kMaxExtent, .fallback = kRequired, .doc = "output width"};

inline constexpr IntegerKey kK{
    .name = "k", .lo = 1, .hi = table::kMaxExtent, .fallback = kRequired, .doc = "reduction width"};

inline constexpr ValueKey kImbalance{
    .name = "imbalance",
    .type = "\"uniform\" or \"rampR\"",
    .fallback = "none",
    .doc = "token spread (max/mean R); the model reads uniform tables"};

inline constexpr ChoiceKey kRole{.name = "role",
                                 .choices = table::kRoleNames,
                                 .fallback = "none",
                                 .doc = "which backward GEMM a bwd table times"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kDtype, &kN, &kK, &kImbalance, &kRole});
inline constexpr Section kSection{"calibration", "/tables/N/key (op grouped_gemm)",
                                  "grouped GEMM key", kKeys};

}  // namespace hopsim::config::keys::grouped_gemm_key

namespace hopsim::config::keys::attention_key {

inline constexpr std::array<std::string_view, 3> kMaskNames{"none", "causal_top_left",
                                                            "causal_bottom_right"};

inline constexpr ChoiceKey kDtype{
    .name = "dtype", .choices = table::kDtypeNames, .fallback = kRequired, .doc = "input type"};

inline constexpr IntegerKey kDQk{.name = "d_qk",
                                 .lo = 1,
                                 .hi = table::kMaxExtent,
                                 .fallback = kRequired,
                                 .doc = "query/key head dimension"};

inline constexpr IntegerKey kDV{.name = "d_v",
                                .lo = 1,
                                .hi = table::kMaxExtent,
                                .fallback = kRequired,
                                .doc = "value head dimension"};

inline constexpr ChoiceKey kMask{
    .name = "mask", .choices = kMaskNames, .fallback = kRequired, .doc = "mask"};

inline constexpr IntegerKey kGqa{.name = "gqa",
                                 .lo = 1,
                                 .hi = table::kMaxExtent,
                                 .fallback = kRequired,
                                 .doc = "query heads per KV head"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kDtype, &kDQk, &kDV, &kMask, &kGqa});
inline constexpr Section kSection{"calibration", "/tables/N/key (op attn)", "attention key", kKeys};

}  // namespace hopsim::config::keys::attention_key

namespace hopsim::config::keys::memory_key {

inline constexpr std::array<std::string_view, 9> kKernelNames{
    "attention_bwd_prep", "fp8_cast", "norm",    "rotary",       "swiglu",
    "residual",           "router",   "permute", "cross_entropy"};

inline constexpr ChoiceKey kDtype{.name = "dtype",
                                  .choices = table::kDtypeNames,
                                  .fallback = kRequired,
                                  .doc = "the activations' type"};

inline constexpr ChoiceKey kKernel{.name = "kernel",
                                   .choices = kKernelNames,
                                   .fallback = kRequired,
                                   .doc = "the memory-bound kernel class (docs/compute-model.md)"};

inline constexpr auto kKeys = std::to_array<KeyRef>({&kDtype, &kKernel});
inline constexpr Section kSection{"calibration", "/tables/N/key (op memory)",
                                  "memory-bound kernel key", kKeys};

}  // namespace hopsim::config::keys::memory_key
