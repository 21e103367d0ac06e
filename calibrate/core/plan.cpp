// Roofline estimates of op time and the dry-run plan text.
#include "calibrate/core/plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/core/flops.hpp"
#include "calibrate/core/workload_shapes.hpp"

namespace hopsim::calib {
namespace {

double roofline_us(double flops, double bytes, double tflops, const EstimateModel& model) {
  return model.launch_us + std::max(flops / (tflops * 1e6), bytes / (model.hbm_GBps * 1e3));
}

double gemm_us(double m, double n, double k, Dtype dtype, const EstimateModel& model) {
  const double peak = dtype == Dtype::Fp8 ? model.fp8_tflops : model.bf16_tflops;
  return roofline_us(gemm_flops(m, n, k), gemm_min_bytes(m, n, k, dtype), peak, model);
}

double grouped_us(const TableSpec& spec, const GridPoint& p, const EstimateModel& model) {
  const Dtype dtype = parse_dtype(key_string(spec.key, "dtype"));
  const auto n = static_cast<double>(key_int(spec.key, "n"));
  const auto k = static_cast<double>(key_int(spec.key, "k"));
  const auto counts =
      tokens_per_expert(static_cast<std::int64_t>(p.values[0]),
                        static_cast<std::int64_t>(p.values[1]), key_string(spec.key, "imbalance"));
  double sum = 0.0;
  for (std::int64_t m : counts) {
    if (m > 0) {
      sum += gemm_us(static_cast<double>(m), n, k, dtype, model);
    }
  }
  return sum;
}

double attn_us(const TableSpec& spec, const GridPoint& p, const EstimateModel& model) {
  const auto s_q = static_cast<std::int64_t>(p.values[0]);
  const auto s_kv = static_cast<std::int64_t>(p.values[1]);
  const double bh = p.values[2];
  const std::int64_t d_qk = key_int(spec.key, "d_qk");
  const std::int64_t d_v = key_int(spec.key, "d_v");
  const Mask mask = parse_mask(key_string(spec.key, "mask"));
  const std::int64_t gqa = key_int(spec.key, "gqa");
  const bool fwd = spec.pass == Pass::Fwd;
  const double flops = fwd ? attn_fwd_flops(bh, d_qk, d_v, s_q, s_kv, mask)
                           : attn_bwd_flops(bh, d_qk, d_v, s_q, s_kv, mask);
  const double bytes = fwd ? attn_fwd_min_bytes(bh, gqa, d_qk, d_v, s_q, s_kv)
                           : attn_bwd_min_bytes(bh, gqa, d_qk, d_v, s_q, s_kv);
  return roofline_us(flops, bytes, fwd ? model.attn_fwd_tflops : model.attn_bwd_tflops, model);
}

/// The suite a table belongs to (the FP8 GEMMs reported apart: the first run lost them all).
std::string suite_of(const TableSpec& spec) {
  const auto dtype = spec.key.find("dtype");
  const bool fp8 = dtype != spec.key.end() && key_string(spec.key, "dtype") == "fp8";
  switch (spec.op) {
    case Op::Gemm:
      return fp8 ? "gemm fp8" : "gemm bf16";
    case Op::GroupedGemm:
      return fp8 ? "experts fp8" : "experts bf16";
    case Op::Attn:
      return "attn";
    case Op::Memory:
      return "memory";
  }
  return "?";
}

}  // namespace

std::string format_suites(const Grid& grid, const std::vector<GridPoint>& points,
                          const MeasureConfig& config, const EstimateModel& model) {
  std::map<std::string, std::pair<std::size_t, double>> per_suite;
  std::set<std::string> planned;
  for (const GridPoint& p : points) {
    auto& [count, seconds] = per_suite[suite_of(grid.tables[p.table])];
    ++count;
    seconds += estimate_point_s(grid.tables[p.table], p, config, model, &planned);
  }
  std::string out = "per suite:";
  for (const auto& [name, stats] : per_suite) {
    out += fmt::format(" {} {} pts {:.1f} s;", name, stats.first, stats.second);
  }
  out.back() = '\n';
  return out;
}

double point_flops(const TableSpec& spec, const GridPoint& p) {
  switch (spec.op) {
    case Op::Gemm:
      return gemm_flops(p.values[0], p.values[1], p.values[2]);
    case Op::GroupedGemm:
      return grouped_gemm_flops(p.values[0], p.values[1],
                                static_cast<double>(key_int(spec.key, "n")),
                                static_cast<double>(key_int(spec.key, "k")));
    case Op::Attn: {
      const auto s_q = static_cast<std::int64_t>(p.values[0]);
      const auto s_kv = static_cast<std::int64_t>(p.values[1]);
      const Mask mask = parse_mask(key_string(spec.key, "mask"));
      const std::int64_t d_qk = key_int(spec.key, "d_qk");
      const std::int64_t d_v = key_int(spec.key, "d_v");
      return spec.pass == Pass::Fwd ? attn_fwd_flops(p.values[2], d_qk, d_v, s_q, s_kv, mask)
                                    : attn_bwd_flops(p.values[2], d_qk, d_v, s_q, s_kv, mask);
    }
    case Op::Memory:
      return p.values[0];  // bytes_v1: its work is the bytes it moves
  }
  return 0.0;
}

double estimate_op_us(const TableSpec& spec, const GridPoint& point, const EstimateModel& model) {
  switch (spec.op) {
    case Op::Gemm:
      return gemm_us(point.values[0], point.values[1], point.values[2],
                     parse_dtype(key_string(spec.key, "dtype")), model);
    case Op::GroupedGemm:
      return grouped_us(spec, point, model);
    case Op::Attn:
      return attn_us(spec, point, model);
    case Op::Memory:
      return roofline_us(0, point.values[0], 1, model);
  }
  return 0.0;
}

double estimate_point_s(const TableSpec& spec, const GridPoint& point, const MeasureConfig& config,
                        const EstimateModel& model, std::set<std::string>* planned) {
  const double op_us = estimate_op_us(spec, point, model);
  double setup_s = model.gemm_plan_s;
  if (spec.op == Op::Attn) {
    setup_s = model.attn_plan_s;
    const std::string fwd_shape =
        fmt::format("{} {}", key_to_string(spec.key), fmt::join(point.values, ","));
    const bool cached = planned != nullptr && !planned->insert(fwd_shape).second;
    if (spec.pass == Pass::Bwd && !cached) {
      setup_s += model.attn_plan_s;
    }
  } else if (spec.op == Op::GroupedGemm) {
    setup_s = model.gemm_plan_s * point.values[0];
  }
  const double warmup_s =
      std::max(config.warmup_ms / 1000.0, static_cast<double>(config.warmup_reps) * op_us * 1e-6);
  const double min_n = static_cast<double>(config.stop.min_samples);
  const double budget_n = config.stop.max_timed_ms * 1000.0 / std::max(op_us, 1e-3);
  const double samples = std::max(min_n, std::min(2.0 * min_n, budget_n));
  const double sample_s = samples * (op_us + model.flush_us + model.rep_overhead_us) * 1e-6;
  return setup_s + warmup_s + sample_s;
}

PlanSummary summarize_plan(const Grid& grid, const std::vector<GridPoint>& points,
                           const MeasureConfig& config, const EstimateModel& model,
                           double budget_s) {
  PlanSummary s;
  s.points = points.size();
  const double fixed_s = model.checks_s + model.ceilings_s;
  std::set<std::string> planned;
  for (const GridPoint& p : points) {
    s.points_s += estimate_point_s(grid.tables[p.table], p, config, model, &planned);
    if (budget_s <= 0.0 || fixed_s + s.points_s <= budget_s) {
      ++s.points_within_budget;
    }
  }
  s.total_s = fixed_s + s.points_s;
  return s;
}

std::string format_plan(const Grid& grid, const std::vector<GridPoint>& points,
                        const MeasureConfig& config, const EstimateModel& model, double budget_s,
                        const std::string& shard_text) {
  std::map<std::size_t, std::pair<std::size_t, double>> per_table;
  std::set<std::string> planned;
  for (const GridPoint& p : points) {
    auto& [count, seconds] = per_table[p.table];
    ++count;
    seconds += estimate_point_s(grid.tables[p.table], p, config, model, &planned);
  }
  std::string out = fmt::format("grid {} shard {}: {} tables, {} points\n", grid.name, shard_text,
                                per_table.size(), points.size());
  for (const auto& [t, stats] : per_table) {
    const TableSpec& spec = grid.tables[t];
    out += fmt::format("  {:<12} {:<3} {:<17} {:<60} {:>4} pts {:>7.1f} s\n", to_string(spec.op),
                       to_string(spec.pass), spec.impl, key_to_string(spec.key), stats.first,
                       stats.second);
  }
  out += format_suites(grid, points, config, model);
  const PlanSummary s = summarize_plan(grid, points, config, model, budget_s);
  out += fmt::format(
      "estimated device time: {:.1f} s ({:.1f} min): points {:.1f} s + checks {:.0f} s + "
      "ceilings {:.0f} s\n",
      s.total_s, s.total_s / 60.0, s.points_s, model.checks_s, model.ceilings_s);
  if (budget_s > 0.0) {
    out += fmt::format("budget {:.0f} s: about {} of {} points fit{}\n", budget_s,
                       s.points_within_budget, s.points,
                       s.points_within_budget == s.points ? "" : " (the rest stay null)");
  }
  out +=
      "estimates assume bf16 650, fp8 1100, attn fwd 450 / bwd 350 TFLOP/s and 1.5 s per cuDNN "
      "plan; they are not measurements\n";
  return out;
}

}  // namespace hopsim::calib
