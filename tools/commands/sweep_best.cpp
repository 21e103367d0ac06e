// A sweep's best points and its GPU-count warning, from the rows of its CSV.
#include "tools/commands/sweep_best.hpp"

#include <algorithm>
#include <cstddef>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "tools/commands/sweep_points.hpp"

namespace hopsim::tools::sweep {
namespace {

// The figures a row can be ranked by, in the CSV's order (sweep_csv's columns before wall_s).
const char* const kMetrics[] = {"step_time_s",  "tokens_per_s_per_gpu", "model_tflops_per_gpu",
                                "mfu",          "compute_s",            "comm_s",
                                "exposed_comm_s", "compute_comm_ratio", "bytes_ib",
                                "bytes_nvlink", "imbalance"};

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) -
                                  header.begin());
}

// A row's value of column `c` as a number; false when it is blank or not one.
bool value_at(const std::vector<std::string>& row, std::size_t c, double& out) {
  return c < row.size() && parse_number(row[c], out);
}

// The point's varied values, "cp=8 dp=2": the keys between "point" and "step_time_s".
std::string point_text(const std::vector<std::string>& header,
                       const std::vector<std::string>& row) {
  std::string text;
  for (std::size_t c = 1; c < header.size() && header[c] != "step_time_s"; ++c) {
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", header[c], row[c]);
  }
  return text;
}

// The ok rows, each with its value of `metric` (rows without one are left out).
std::vector<std::pair<double, const std::vector<std::string>*>> ranked(
    const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
    const std::string& metric) {
  const std::size_t status = column(header, "status");
  const std::size_t c = column(header, metric);
  std::vector<std::pair<double, const std::vector<std::string>*>> out;
  for (const auto& row : rows) {
    double v = 0;
    if (status < row.size() && row[status] == "ok" && value_at(row, c, v)) {
      out.emplace_back(v, &row);
    }
  }
  const bool higher = higher_is_better(metric);
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    return higher ? a.first > b.first : a.first < b.first;
  });
  return out;
}

// The warning of rows whose GPU counts differ, or nothing.
std::string gpu_warning(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows,
                        const std::string& metric) {
  const std::size_t status = column(header, "status");
  const std::size_t c = column(header, "gpus");
  std::set<double> counts;
  for (const auto& row : rows) {
    double v = 0;
    if (status < row.size() && row[status] == "ok" && value_at(row, c, v)) {
      counts.insert(v);
    }
  }
  if (counts.size() < 2) {
    return {};
  }
  return fmt::format(
      "sweep: warning: the varied keys change the GPU count ({} to {} GPUs): a point's step time "
      "is for its own GPUs and tokens; compare points per GPU ({}), or keep tp x cp x pp x dp "
      "fixed (vary dp with cp)\n",
      *counts.begin(), *counts.rbegin(),
      metric == "step_time_s" ? std::string("--rank-by tokens_per_s_per_gpu") : metric);
}

}  // namespace

std::vector<std::string> rank_metrics() { return {std::begin(kMetrics), std::end(kMetrics)}; }

bool higher_is_better(const std::string& metric) {
  return metric == "tokens_per_s_per_gpu" || metric == "model_tflops_per_gpu" ||
         metric == "mfu" || metric == "compute_comm_ratio";
}

std::string best_points(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows, std::string metric,
                        std::size_t count) {
  if (metric.empty()) {
    metric = ranked(header, rows, "tokens_per_s_per_gpu").empty() ? "step_time_s"
                                                                  : "tokens_per_s_per_gpu";
  }
  const auto best = ranked(header, rows, metric);
  if (best.empty()) {
    return {};
  }
  std::string out = fmt::format("sweep: best {} by {} ({} is better):\n",
                                std::min(count, best.size()) == 1 ? "point" : "points", metric,
                                higher_is_better(metric) ? "higher" : "lower");
  const std::size_t step = column(header, "step_time_s");
  const std::size_t gpus = column(header, "gpus");
  for (std::size_t i = 0; i < best.size() && i < count; ++i) {
    const std::vector<std::string>& row = *best[i].second;
    std::string extra;
    if (metric != "step_time_s" && step < row.size()) {
      extra += fmt::format(", step_time_s {}", row[step]);
    }
    if (gpus < row.size() && !row[gpus].empty()) {
      extra += fmt::format(", {} GPUs", row[gpus]);
    }
    out += fmt::format("  {}. point {}: {}: {} {:.6g}{}\n", i + 1, row[0],
                       point_text(header, row), metric, best[i].first, extra);
  }
  return out + gpu_warning(header, rows, metric);
}

}  // namespace hopsim::tools::sweep
