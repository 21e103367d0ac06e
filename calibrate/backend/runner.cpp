// run_measurement for CUDA builds: checks, ceilings, then the grid points of this shard within
// the budget, writing the table (also every 20 s, so a killed run keeps partial results).
#include <chrono>
#include <optional>
#include <fstream>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibrate/backend/checks.hpp"
#include "calibrate/backend/cuda_check.hpp"
#include "calibrate/backend/device.hpp"
#include "calibrate/backend/suites.hpp"
#include "calibrate/core/clocks.hpp"
#include "calibrate/core/lt_spec.hpp"
#include "calibrate/core/plan.hpp"
#include "calibrate/core/run_options.hpp"
#include "calibrate/core/table_json.hpp"

namespace hopsim::calib {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// An op, the dtype a failed check covered (none: every dtype of the op) and the impl (empty:
/// every impl).
using FailedCheck = std::tuple<Op, std::optional<Dtype>, std::string>;

/// Prints the checks; returns the ops (and dtypes) whose checks failed.
std::set<FailedCheck> report_checks(const std::vector<CheckResult>& checks) {
  std::set<FailedCheck> failed;
  for (const CheckResult& c : checks) {
    fmt::print(stderr, "check {} {}: {}\n", c.passed ? "PASS" : "FAIL", c.name, c.detail);
    if (!c.passed) {
      failed.insert({c.op, c.dtype, c.impl});
    }
  }
  return failed;
}

nlohmann::json clocks_json(std::optional<double> before, std::optional<double> after) {
  nlohmann::json j = nlohmann::json::object();
  if (before) {
    j["sm_before"] = *before;
  }
  if (after) {
    j["sm_after"] = *after;
  }
  if (const auto max = nvidia_smi_query("clocks.max.sm")) {
    try {
      j["sm_max"] = std::stod(*max);
    } catch (const std::exception&) {
      // not a number (e.g. "[N/A]"): leave it out
    }
  }
  return j.empty() ? nlohmann::json(nullptr) : j;
}

/// The method block: how the numbers were taken, the clocks during the grid, and what each
/// FP8 table measured (which recipe).
nlohmann::json method_json(const ClockLog& clocks) {
  nlohmann::json m = default_method();
  m.update(clocks.method_fields());
  m["fp8_recipe_gemm_cublaslt"] = recipe_text(Fp8Recipe::Tensor);
  m["fp8_recipe_gemm_cublaslt_blk128"] = recipe_text(Fp8Recipe::Block128);
  m["fp8_recipe_grouped_gemm"] = recipe_text(Fp8Recipe::Tensor) + ", per expert";
  return m;
}

/// One measuring run over the points of a shard.
class MeasurementRun {
 public:
  explicit MeasurementRun(const RunOptions& o) : o_(o), grid_(make_grid(o.grid)) {
    points_ = shard_points(grid_points(grid_, o.suite), o.shard);
    for (const TableSpec& spec : grid_.tables) {
      tables_.push_back(empty_table(spec));
    }
  }

  int run() {
    const DeviceInfo info = query_device();
    fmt::print(stderr, "device: {} (cc {}, {} SMs, {} MiB L2), driver {}, cuBLAS {}, cuDNN {}\n",
               info.name, info.cc, info.sm_count, info.l2_bytes >> 20, info.driver, info.cublas,
               info.cudnn);
    if (!sampler_) {
      fmt::print(stderr, "clocks: no NVML ({}): points are not sampled or re-measured\n",
                 nvml_why_not_);
    }
    failed_ops_ = report_checks(run_checks(ctx_, state_.attn_plans, o_.suite));
    if (o_.check_only) {
      return failed_ops_.empty() ? 0 : 1;
    }
    const auto clock_before = sm_clock_mhz();
    const nlohmann::json ceilings = measure_ceilings(ctx_, timer_, o_.measure);
    fmt::print(stderr, "ceilings: {}\n", ceilings.dump());
    clocks_.start();  // right after the ceilings' work: the reference for the 3% rule
    if (const auto s = clocks_.start_sample()) {
      fmt::print(stderr, "clocks at the start: SM {} MHz, memory {} MHz, {} C, {:.0f} W\n",
                 s->sm_mhz, s->mem_mhz, s->temp_c, s->power_w);
    }
    header_.created_utc = utc_now();
    header_.method = method_json(clocks_);
    header_.device = device_json(info, nullptr, ceilings);
    measure_points();
    header_.device = device_json(info, run_clocks(clock_before), ceilings);
    header_.method = method_json(clocks_);
    write();
    fmt::print(
        stderr,
        "wrote {}: {} of {} points measured, {} skipped after failed checks, {} errors, {} left by "
        "the budget ({:.0f} s)\n",
        o_.out, measured_, points_.size(), skipped_, errors_, left_, seconds_since(start_));
    return failed_ops_.empty() && errors_ == 0 ? 0 : 1;
  }

 private:
  void measure_points() {
    Clock::time_point last_write = Clock::now();
    for (std::size_t i = 0; i < points_.size(); ++i) {
      if (o_.budget_s > 0.0 && seconds_since(start_) > o_.budget_s) {
        left_ = points_.size() - i;
        fmt::print(stderr, "budget of {:.0f} s used up: {} points left unmeasured\n", o_.budget_s,
                   left_);
        return;
      }
      if (!measure_one(i)) {
        fmt::print(stderr, "the CUDA context is broken; stopping and keeping what was measured\n");
        left_ = points_.size() - i - 1;
        return;
      }
      if (seconds_since(last_write) > 20.0) {
        write();
        last_write = Clock::now();
      }
    }
  }

  /// Whether a failed check covers the table: one for its op and every dtype, or for its dtype
  /// (of every impl, or of its own).
  bool failed_check_covers(const TableSpec& spec) const {
    if (failed_ops_.count({spec.op, std::nullopt, ""}) != 0) {
      return true;
    }
    if (spec.key.find("dtype") == spec.key.end()) {
      return false;
    }
    const Dtype dtype = parse_dtype(key_string(spec.key, "dtype"));
    return failed_ops_.count({spec.op, dtype, ""}) != 0 ||
           failed_ops_.count({spec.op, dtype, spec.impl}) != 0;
  }

  /// The SM clock before and after (nvidia-smi), and NVML's per-point min/median.
  nlohmann::json run_clocks(std::optional<double> before) const {
    nlohmann::json j = clocks_json(before, sm_clock_mhz());
    const nlohmann::json nvml = clocks_.clocks_mhz();
    if (!nvml.is_null()) {
      if (j.is_null()) {
        j = nlohmann::json::object();
      }
      j.update(nvml);
    }
    return j;
  }

  /// Measures point i into its table; false when the CUDA context can no longer be used.
  bool measure_one(std::size_t i) {
    const GridPoint& p = points_[i];
    const TableSpec& spec = grid_.tables[p.table];
    if (failed_check_covers(spec)) {
      ++skipped_;
      return true;
    }
    const std::string what =
        fmt::format("{} {} {} [{}] at {}", to_string(spec.op), to_string(spec.pass), spec.impl,
                    key_to_string(spec.key), fmt::join(p.values, ","));
    try {
      Measurement m;
      const PointClocks clocks = clocks_.around(
          what, [&] { m = measure_point(ctx_, timer_, state_, spec, p, o_.measure); });
      report_clocks(what, clocks);
      Table& t = tables_[p.table];
      t.time_us[p.cell] = m.summary.median_us;
      t.p10_us[p.cell] = m.summary.p10_us;
      t.p90_us[p.cell] = m.summary.p90_us;
      ++measured_;
      fmt::print(stderr, "[{}/{}] {}: {:.1f} us (p10 {:.1f}, p90 {:.1f}, n {}) {:.0f} TFLOP/s\n",
                 i + 1, points_.size(), what, m.summary.median_us, m.summary.p10_us,
                 m.summary.p90_us, m.summary.n, point_flops(spec, p) / (m.summary.median_us * 1e6));
    } catch (const std::exception& e) {
      ++errors_;
      fmt::print(stderr, "[{}/{}] {}: FAILED: {}\n", i + 1, points_.size(), what, e.what());
      return cudaDeviceSynchronize() == cudaSuccess;
    }
    return true;
  }

  void report_clocks(const std::string& what, const PointClocks& c) const {
    if (c.remeasured) {
      fmt::print(stderr, "{}: SM clock fell more than 3% below the start's {} MHz: re-measured{}\n",
                 what, clocks_.start_sample()->sm_mhz,
                 c.throttled ? fmt::format(", still at {} MHz: flagged (throttled)",
                                           c.sample ? c.sample->sm_mhz : 0.0)
                             : "");
    }
  }

  /// Writes the tables that have at least one measured cell, and the clocks per point beside
  /// them (TABLE.clocks.csv).
  void write() const {
    std::ofstream(o_.out + ".clocks.csv") << clocks_.csv();
    CalibrationFile f = header_;
    for (const Table& t : tables_) {
      if (t.measured_cells() > 0) {
        f.tables.push_back(t);
      }
    }
    write_calibration_file(o_.out, f);
  }

  const RunOptions& o_;
  const Clock::time_point start_ = Clock::now();  // the budget covers checks and ceilings too
  Grid grid_;
  std::vector<GridPoint> points_;
  std::vector<Table> tables_;
  CalibrationFile header_;
  GpuContext ctx_;
  CudaTimer timer_{ctx_.stream()};
  SuiteState state_;
  std::string nvml_why_not_;
  std::unique_ptr<ClockSampler> sampler_ = make_nvml_sampler(nvml_why_not_);
  ClockLog clocks_{sampler_.get()};
  std::set<FailedCheck> failed_ops_;
  std::size_t measured_ = 0;
  std::size_t skipped_ = 0;
  std::size_t errors_ = 0;
  std::size_t left_ = 0;
};

}  // namespace

int run_measurement(const RunOptions& options) {
  if (const auto reason = device_unavailable_reason()) {
    fmt::print(stderr, "hopsim-calibrate: {}\n", *reason);
    return 1;
  }
  try {
    MeasurementRun run(options);
    return run.run();
  } catch (const CudaError& e) {
    fmt::print(stderr, "hopsim-calibrate: {}\n", e.what());
    return 1;
  }
}

}  // namespace hopsim::calib
