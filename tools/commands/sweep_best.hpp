// The end of a sweep: its best points by the metric the user ranks by, and a warning when the
// points do not run on the same number of GPUs (then a lower step time is not a better point).
#pragma once

#include <string>
#include <vector>

namespace hopsim::tools::sweep {

/// The columns --rank-by accepts: the figures of a row.
std::vector<std::string> rank_metrics();

/// Whether a higher value of `metric` is better (throughput) rather than a lower (time, bytes).
bool higher_is_better(const std::string& metric);

/// What a sweep's rows come to, as lines for stderr: the `count` best ok rows by `metric`
/// (empty: tokens_per_s_per_gpu where the rows have it, else step_time_s), each with its
/// point's values, and a warning when the ok rows' GPU counts differ. `rows` are the CSV's
/// rows under `header`, split into fields. Empty when no row is ok.
std::string best_points(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows, std::string metric,
                        std::size_t count = 3);

}  // namespace hopsim::tools::sweep
