// Source names and the per-source tally of compute time.
#include "workloads/compute/source.hpp"

namespace hopsim::work {

std::string_view source_name(Source s) {
  constexpr std::array<std::string_view, kSources.size()> kNames{"exact", "interpolated",
                                                                 "clamped", "roofline", "recorded"};
  return kNames[static_cast<std::size_t>(s)];
}

void ComputeTally::add(Source source, Time time) {
  time_[static_cast<std::size_t>(source)] += time;
}

Time ComputeTally::total() const {
  Time sum;
  for (Time t : time_) {
    sum += t;
  }
  return sum;
}

Time ComputeTally::time(Source source) const { return time_[static_cast<std::size_t>(source)]; }

double ComputeTally::share(Source source) const {
  const Time all = total();
  return all == Time{} ? 0 : time(source).seconds() / all.seconds();
}

}  // namespace hopsim::work
