// Where a kernel's time came from (a calibration table or the roofline), and time per source.
#pragma once

#include <array>
#include <string_view>

#include "sim/units.hpp"

namespace hopsim::work {

/// Where an answer came from, best first; Recorded: a time a trace recorded (a replayed
/// Chakra trace's kernels), which reports list only when some compute has it.
enum class Source : std::uint8_t { Exact, Interpolated, Clamped, Roofline, Recorded };
inline constexpr std::array<Source, 5> kSources{Source::Exact, Source::Interpolated,
                                                Source::Clamped, Source::Roofline,
                                                Source::Recorded};

/// "exact", "interpolated", "clamped", "roofline", "recorded": as in reports.
std::string_view source_name(Source s);

/// Compute time per source, for the report's shares ("compute_sources").
class ComputeTally {
 public:
  void add(Source source, Time time);
  Time total() const;
  Time time(Source source) const;
  /// The fraction of the total time from `source`; 0 when nothing was added.
  double share(Source source) const;

 private:
  std::array<Time, kSources.size()> time_{};
};

}  // namespace hopsim::work
