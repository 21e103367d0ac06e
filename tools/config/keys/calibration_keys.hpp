// The keys of a calibration table file (schema "hopsim.calibration/1"): its top level and the
// measured device (its tables' keys: calibration_table_keys.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "tools/config/key.hpp"

namespace hopsim::config::keys::calibration {

inline constexpr std::array<std::string_view, 1> kSchemaName{"hopsim.calibration/1"};
inline constexpr std::array<std::string_view, 2> kSourceNames{"measured", "published"};

inline constexpr ChoiceKey kSchema{
    .name = "schema", .choices = kSchemaName, .fallback = kRequired, .doc = "the format version"};

inline constexpr StringKey kCreatedUtc{
    .name = "created_utc", .fallback = kRequired, .doc = "when the table was made"};

inline constexpr ChoiceKey kSource{.name = "source",
                                   .choices = kSourceNames,
                                   .fallback = kRequired,
                                   .doc = "published tables cite every table"};

inline constexpr ValueKey kDevice{.name = "device",
                                  .type = "object",
                                  .fallback = kRequired,
                                  .doc = "the GPU the times belong to"};

inline constexpr ValueKey kMethod{
    .name = "method",
    .type = "object of strings, numbers, booleans",
    .fallback = kRequired,
    .doc = "how times were taken (timer, L2 flush, warm-up, statistic)"};

inline constexpr StringKey kDescription{
    .name = "description", .fallback = "none", .doc = "free text"};

inline constexpr StringKey kBase{
    .name = "base",
    .non_empty = true,
    .fallback = "none",
    .doc =
        "a shipped calibration table (\"h100-published\") that answers where none of this "
        "file's own tables does, scaled from its GPU to the cluster's; the base's own base "
        "answers where neither does (at most 4 bases in a chain, none twice)"};

inline constexpr BooleanKey kAuto{
    .name = "auto",
    .value = true,
    .doc =
        "whether \"calibration\": \"auto\" may choose this table (false: only experiments "
        "that name it use it, e.g. a partial measurement); a measured table auto takes only "
        "when each of its families passes its checks"};

inline constexpr ValueKey kTables{.name = "tables",
                                  .type = "array of objects",
                                  .fallback = kRequired,
                                  .doc = "at least one table"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kSchema, &kCreatedUtc, &kSource, &kDevice, &kMethod, &kDescription,
                           &kBase, &kAuto, &kTables});
inline constexpr Section kSection{"calibration", "/",
                                  "a calibration table file (configs/calibration/*.json)", kKeys};

}  // namespace hopsim::config::keys::calibration

namespace hopsim::config::keys::device {

/// Datasheet figures, TFLOP/s or GB/s: far above any GPU.
inline constexpr double kMaxFigure = 1e6;

inline constexpr StringKey kName{
    .name = "name",
    .non_empty = true,
    .fallback = kRequired,
    .doc = "device name; must contain the cluster GPU's model (\"H100\")"};

inline constexpr StringKey kCc{.name = "cc", .fallback = "none", .doc = "compute capability"};

inline constexpr IntegerKey kSmCount{.name = "sm_count",
                                     .lo = 1,
                                     .hi = 1'000'000,
                                     .fallback = "none",
                                     .doc = "streaming multiprocessors"};

inline constexpr ValueKey kDriver{
    .name = "driver", .type = "string or integer", .fallback = "none", .doc = "driver version"};

inline constexpr ValueKey kCudaRuntime{.name = "cuda_runtime",
                                       .type = "string or integer",
                                       .fallback = "none",
                                       .doc = "CUDA runtime version"};

inline constexpr ValueKey kCublas{
    .name = "cublas", .type = "string or integer", .fallback = "none", .doc = "cuBLAS version"};

inline constexpr ValueKey kCudnn{
    .name = "cudnn", .type = "string or integer", .fallback = "none", .doc = "cuDNN version"};

inline constexpr ValueKey kClocksMhz{.name = "clocks_mhz",
                                     .type = "object of numbers > 0",
                                     .unit = Unit::Mhz,
                                     .fallback = "none",
                                     .doc = "clocks during the measurement"};

inline constexpr ValueKey kCeilings{
    .name = "ceilings", .type = "object", .fallback = "none", .doc = "measured ceilings"};

inline constexpr IntegerKey kHbmBytes{.name = "hbm_bytes",
                                      .lo = 1,
                                      .hi = INT64_MAX,
                                      .unit = Unit::Bytes,
                                      .fallback = "none",
                                      .doc = "HBM capacity"};

inline constexpr ValueKey kEquivalentGpus{.name = "equivalent_gpus",
                                          .type = "array of non-empty strings",
                                          .fallback = "[]",
                                          .doc = "GPU models with the same SMs and clocks "
                                                 "(the device's sm_count and "
                                                 "peak_bf16_tflops must then be theirs)"};

inline constexpr NumberKey kPeakBf16Tflops{
    .name = "peak_bf16_tflops",
    .sign = Sign::Positive,
    .hi = kMaxFigure,
    .unit = Unit::Tflops,
    .fallback = "none",
    .doc =
        "datasheet dense BF16 peak (with peak_fp8_tflops and hbm_GBps: other GPUs "
        "may use the table, scaled)"};

inline constexpr NumberKey kPeakFp8Tflops{.name = "peak_fp8_tflops",
                                          .sign = Sign::Positive,
                                          .hi = kMaxFigure,
                                          .unit = Unit::Tflops,
                                          .fallback = "none",
                                          .doc = "datasheet dense FP8 peak"};

inline constexpr NumberKey kPeakFp4Tflops{.name = "peak_fp4_tflops",
                                          .sign = Sign::Positive,
                                          .hi = kMaxFigure,
                                          .unit = Unit::Tflops,
                                          .fallback = "none",
                                          .doc = "datasheet dense NVFP4 peak (Blackwell): "
                                                 "tells \"auto\" which table is nearest"};

inline constexpr NumberKey kHbmGBps{.name = "hbm_GBps",
                                    .sign = Sign::Positive,
                                    .hi = kMaxFigure,
                                    .unit = Unit::GBps,
                                    .fallback = "none",
                                    .doc = "datasheet HBM bandwidth"};

inline constexpr auto kKeys = std::to_array<KeyRef>(
    {&kName, &kCc, &kSmCount, &kDriver, &kCudaRuntime, &kCublas, &kCudnn, &kClocksMhz, &kCeilings,
     &kHbmBytes, &kEquivalentGpus, &kPeakBf16Tflops, &kPeakFp8Tflops, &kPeakFp4Tflops,
     &kHbmGBps});
inline constexpr Section kSection{"calibration", "/device", "the measured GPU", kKeys};

}  // namespace hopsim::config::keys::device

namespace hopsim::config::keys::ceilings {

inline constexpr NumberKey kCopyGBps{.name = "copy_GBps",
                                     .sign = Sign::Positive,
                                     .unit = Unit::GBps,
                                     .fallback = "none",
                                     .doc = "device-to-device copy"};

inline constexpr NumberKey kBf16GemmTflops{.name = "bf16_gemm_tflops",
                                           .sign = Sign::Positive,
                                           .unit = Unit::Tflops,
                                           .fallback = "none",
                                           .doc = "best BF16 GEMM"};

inline constexpr NumberKey kFp8GemmTflops{.name = "fp8_gemm_tflops",
                                          .sign = Sign::Positive,
                                          .unit = Unit::Tflops,
                                          .fallback = "none",
                                          .doc = "best FP8 GEMM"};

inline constexpr auto kKeys =
    std::to_array<KeyRef>({&kCopyGBps, &kBf16GemmTflops, &kFp8GemmTflops});
inline constexpr Section kSection{"calibration", "/device/ceilings", "measured ceilings", kKeys};

}  // namespace hopsim::config::keys::ceilings
