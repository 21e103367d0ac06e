// The end of a sweep: its best points by the metric the user ranks by, and a warning when the
// points do not run on the same number of GPUs (then a lower step time is not a better point).
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hopsim::tools::sweep {

/// The columns --rank-by accepts: the figures of a row.
std::vector<std::string> rank_metrics();

/// Whether a higher value of `metric` is better (throughput) rather than a lower (time, bytes).
bool higher_is_better(const std::string& metric);

/// A sweep's rows seen one at a time, keeping only the best few and the GPU counts (a sweep
/// may have a million rows).
class BestPoints {
 public:
  /// Rows under `header` (the CSV's columns), ranked by `metric` (empty: tokens_per_s_per_gpu
  /// where the rows have it, else step_time_s), the best `count` kept.
  BestPoints(std::vector<std::string> header, std::string metric, std::size_t count = 3);

  /// One row, split into fields; rows that are not ok are counted out.
  void add(const std::vector<std::string>& row);

  /// Lines for stderr: the best ok rows with their points' values, and a warning when the ok
  /// rows' GPU counts differ. Empty when no row was ok.
  std::string text() const;

  /// How many of the rows added were ok.
  std::size_t ok_rows() const { return ok_rows_; }

 private:
  struct Ranked {
    std::vector<std::pair<double, std::vector<std::string>>> rows;  // best first
    void add(double value, const std::vector<std::string>& row, bool higher, std::size_t count);
  };
  std::string metric_of() const;

  std::vector<std::string> header_;
  std::string metric_;
  std::size_t count_;
  // Where the columns read for every row are in header_ (header_.size() when absent).
  std::size_t status_col_;
  std::size_t gpus_col_;
  std::size_t metric_col_;
  std::size_t tokens_col_;
  std::size_t step_col_;
  Ranked by_metric_;      // by metric_, when given
  Ranked by_tokens_;      // by tokens_per_s_per_gpu, when metric_ is empty
  Ranked by_step_;        // by step_time_s, when metric_ is empty
  std::set<double> gpus_;  // of the ok rows
  std::size_t ok_rows_ = 0;
};

}  // namespace hopsim::tools::sweep
