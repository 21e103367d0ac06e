// Dry-run planning: per-point device-time estimates and the printed plan of a run.
//
// Estimates are a roofline with assumed efficiencies (below), plus per-point setup (plan or
// heuristic selection), warm-up and the L2 flush of every sample. They size runs; they are
// not measurements.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "calibrate/core/grid.hpp"
#include "calibrate/core/measure.hpp"

namespace hopsim::calib {

/// Assumed H100/H200-class throughputs for estimates only (docs/validation.md, "Kernels").
struct EstimateModel {
  double bf16_tflops = 650.0;
  double fp8_tflops = 1100.0;
  double attn_fwd_tflops = 450.0;
  double attn_bwd_tflops = 350.0;
  double hbm_GBps = 4000.0;  // NOLINT(readability-identifier-naming): unit in the name
  double launch_us = 5.0;
  double flush_us = 90.0;         ///< 256 MB memset
  double rep_overhead_us = 30.0;  ///< event sync and host work per sample
  double attn_plan_s = 1.5;       ///< cuDNN heuristics + plan finalize + first (JIT) run
  double gemm_plan_s = 0.01;      ///< cuBLASLt heuristic query per distinct shape
  double checks_s = 20.0;         ///< correctness checks before timing
  double ceilings_s = 3.0;        ///< copy and GEMM ceilings
};

/// FLOPs of one op at `point` by the table's named formula (tokens_per_expert as the mean).
double point_flops(const TableSpec& spec, const GridPoint& point);

/// Estimated device time of one run of the op at `point` (microseconds).
double estimate_op_us(const TableSpec& spec, const GridPoint& point, const EstimateModel& model);

/// Estimated wall time to measure `point`: setup + warm-up + samples (seconds).
/// `planned` holds the attention forward shapes whose plan a run has already built (a backward
/// point needs the forward plan too, to produce O and the softmax stats); it is updated. Null
/// means nothing is cached.
double estimate_point_s(const TableSpec& spec, const GridPoint& point, const MeasureConfig& config,
                        const EstimateModel& model, std::set<std::string>* planned = nullptr);

struct PlanSummary {
  std::size_t points = 0;
  double points_s = 0.0;
  double total_s = 0.0;  ///< points plus checks and ceilings
  /// How many leading points fit in the budget (all when there is none).
  std::size_t points_within_budget = 0;
};

PlanSummary summarize_plan(const Grid& grid, const std::vector<GridPoint>& points,
                           const MeasureConfig& config, const EstimateModel& model,
                           double budget_s);

/// One line: each suite's points and estimated seconds ("gemm bf16", "gemm fp8", "experts
/// bf16", "experts fp8", "attn", "memory").
std::string format_suites(const Grid& grid, const std::vector<GridPoint>& points,
                          const MeasureConfig& config, const EstimateModel& model);

/// Human-readable plan: one line per table with points and estimated time, then totals.
std::string format_plan(const Grid& grid, const std::vector<GridPoint>& points,
                        const MeasureConfig& config, const EstimateModel& model, double budget_s,
                        const std::string& shard_text);

}  // namespace hopsim::calib
