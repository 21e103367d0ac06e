// Measuring one grid point of each op kind, and the device ceilings (copy, 8192³ GEMMs).
#pragma once

#include <nlohmann/json.hpp>

#include "calibrate/backend/attention.hpp"
#include "calibrate/backend/context.hpp"
#include "calibrate/backend/event_timer.hpp"
#include "calibrate/core/grid.hpp"
#include "calibrate/core/measure.hpp"

namespace hopsim::calib {

/// What persists across the points of a run.
struct SuiteState {
  AttnPlanCache attn_plans;
};

/// Sets up the op of `point` (buffers, plan), runs it once untimed, then measures it.
Measurement measure_point(GpuContext& ctx, TimerBackend& timer, SuiteState& state,
                          const TableSpec& spec, const GridPoint& point,
                          const MeasureConfig& config);

/// Token counts of a grouped point; FP8 counts are padded to multiples of 16 as Transformer
/// Engine pads them (FP8 GEMMs need 16-aligned leading dimensions).
std::vector<std::int64_t> expert_tokens(const TableSpec& spec, const GridPoint& point);

/// {"copy_GBps": D2D memcpy of 2 GiB counted as read + write, "bf16_gemm_tflops", "fp8_gemm_tflops"
/// at 8192³}; a ceiling that fails is left out.
nlohmann::json measure_ceilings(GpuContext& ctx, TimerBackend& timer, const MeasureConfig& config);

}  // namespace hopsim::calib
