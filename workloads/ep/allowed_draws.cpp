// AllowedDraws (allowed_draws.hpp): the cached sums' search, and the walk it falls back on.
#include "workloads/ep/allowed_draws.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace hopsim::work {

const std::vector<double>& AllowedDraws::weights_under(std::size_t top) {
  std::vector<double>& row = rows_[top];
  if (row.empty()) {
    row.reserve(p_.log_weight.size());
    for (double l : p_.log_weight) {
      row.push_back(std::exp(l - p_.log_weight[top]));  // draw_allowed's weight, bit for bit
    }
  }
  return row;
}

int AllowedDraws::pick(RoutingRng& rng, const Open& open) {
  const double total = open.sum.back();
  const double u = unit(rng) * total;
  const double delta = 8.0 * static_cast<double>(open.experts.size() + 1) * DBL_EPSILON * total;
  const auto j = std::upper_bound(open.sum.begin(), open.sum.end(), u + delta);
  if (j != open.sum.end() && (j == open.sum.begin() || *(j - 1) < u - delta)) {
    return open.experts[static_cast<std::size_t>(j - open.sum.begin())];
  }
  ++walks_;
  double left = u;
  for (std::size_t i = 0; i < open.experts.size(); ++i) {
    left -= open.weight[i];
    if (left < 0) {
      return open.experts[i];
    }
  }
  return open.experts.back();  // u was within rounding of the total
}

}  // namespace hopsim::work
