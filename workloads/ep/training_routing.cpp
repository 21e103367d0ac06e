#include "workloads/ep/training_routing.hpp"

#include <algorithm>

namespace hopsim::work {

double independent_tokens(const MoeRouting& r, std::size_t ranks) {
  const auto sequence =
      static_cast<double>(r.sequence_tokens > 0 ? r.sequence_tokens : r.tokens_per_gpu);
  const double run = std::max(1.0, std::min(r.run_tokens, sequence));
  const double tokens = static_cast<double>(ranks) * static_cast<double>(r.tokens_per_gpu);
  return std::max(1.0, tokens / run);
}

}  // namespace hopsim::work
