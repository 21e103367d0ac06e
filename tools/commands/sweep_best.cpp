// A sweep's best points and its GPU-count warning, from the rows of its CSV.
#include "tools/commands/sweep_best.hpp"

#include <algorithm>

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
  for (std::size_t c = 1; c < header.size() && c < row.size() && header[c] != "step_time_s";
       ++c) {
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", header[c], row[c]);
  }
  return text;
}

}  // namespace

std::vector<std::string> rank_metrics() { return {std::begin(kMetrics), std::end(kMetrics)}; }

bool higher_is_better(const std::string& metric) {
  return metric == "tokens_per_s_per_gpu" || metric == "model_tflops_per_gpu" ||
         metric == "mfu" || metric == "compute_comm_ratio";
}

void BestPoints::Ranked::add(double value, const std::vector<std::string>& row, bool higher,
                             std::size_t count) {
  // Ties keep the earlier row first (rows come in CSV order).
  const auto at = std::find_if(rows.begin(), rows.end(), [&](const auto& r) {
    return higher ? value > r.first : value < r.first;
  });
  if (static_cast<std::size_t>(at - rows.begin()) < count) {
    rows.insert(at, {value, row});
    if (rows.size() > count) {
      rows.pop_back();
    }
  }
}

BestPoints::BestPoints(std::vector<std::string> header, std::string metric, std::size_t count)
    : header_(std::move(header)),
      metric_(std::move(metric)),
      count_(count),
      status_col_(column(header_, "status")),
      gpus_col_(column(header_, "gpus")),
      metric_col_(column(header_, metric_)),
      tokens_col_(column(header_, "tokens_per_s_per_gpu")),
      step_col_(column(header_, "step_time_s")) {}

void BestPoints::add(const std::vector<std::string>& row) {
  if (status_col_ >= row.size() || row[status_col_] != "ok") {
    return;
  }
  ++ok_rows_;
  double v = 0;
  if (value_at(row, gpus_col_, v)) {
    gpus_.insert(v);
  }
  const auto rank = [&](Ranked& r, std::size_t col, const std::string& metric) {
    double value = 0;
    if (value_at(row, col, value)) {
      r.add(value, row, higher_is_better(metric), count_);
    }
  };
  if (!metric_.empty()) {
    rank(by_metric_, metric_col_, metric_);
  } else {
    rank(by_tokens_, tokens_col_, "tokens_per_s_per_gpu");
    rank(by_step_, step_col_, "step_time_s");
  }
}

std::string BestPoints::metric_of() const {
  if (!metric_.empty()) {
    return metric_;
  }
  return by_tokens_.rows.empty() ? "step_time_s" : "tokens_per_s_per_gpu";
}

std::string BestPoints::text() const {
  const std::string metric = metric_of();
  const Ranked& best = !metric_.empty() ? by_metric_ : (by_tokens_.rows.empty() ? by_step_
                                                                                : by_tokens_);
  if (best.rows.empty()) {
    return {};
  }
  std::string out = fmt::format("sweep: best {} by {} ({} is better):\n",
                                best.rows.size() == 1 ? "point" : "points", metric,
                                higher_is_better(metric) ? "higher" : "lower");
  for (std::size_t i = 0; i < best.rows.size(); ++i) {
    const auto& [value, row] = best.rows[i];
    std::string extra;
    if (metric != "step_time_s" && step_col_ < row.size()) {
      extra += fmt::format(", step_time_s {}", row[step_col_]);
    }
    if (gpus_col_ < row.size() && !row[gpus_col_].empty()) {
      extra += fmt::format(", {} GPUs", row[gpus_col_]);
    }
    out += fmt::format("  {}. point {}: {}: {} {:.6g}{}\n", i + 1, row[0],
                       point_text(header_, row), metric, value, extra);
  }
  if (gpus_.size() >= 2) {
    out += fmt::format(
        "sweep: warning: the varied keys change the GPU count ({} to {} GPUs): a point's step "
        "time is for its own GPUs and tokens; compare points per GPU ({}), or keep "
        "tp x cp x pp x dp fixed (vary dp with cp)\n",
        *gpus_.begin(), *gpus_.rbegin(),
        metric == "step_time_s" ? std::string("--rank-by tokens_per_s_per_gpu") : metric);
  }
  return out;
}

}  // namespace hopsim::tools::sweep
