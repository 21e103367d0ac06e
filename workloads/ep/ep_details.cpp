#include "workloads/ep/ep_details.hpp"

#include <algorithm>
#include <numeric>

namespace hopsim::work {

double max_over_mean(const std::vector<std::int64_t>& v) {
  if (v.empty()) {
    return 0;
  }
  const double sum = std::accumulate(v.begin(), v.end(), 0.0,
                                     [](double a, std::int64_t x) { return a + static_cast<double>(x); });
  const double max = static_cast<double>(*std::max_element(v.begin(), v.end()));
  return sum > 0 ? max * static_cast<double>(v.size()) / sum : 0.0;
}

}  // namespace hopsim::work
