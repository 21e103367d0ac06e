// Whether "calibration": "auto" may take a measured table: each of its families (op, pass, impl,
// key) held against the GPU's ceilings, for a monotone shape, and against the published table
// auto would take otherwise.
#pragma once

#include <string>
#include <vector>

#include "topology/spec.hpp"
#include "workloads/compute/calibration.hpp"

namespace hopsim::config {

/// A family's median |difference| from the published table's answers (or the roofline's, where
/// it has none) may be at most this: the shipped measured H200 table's BF16 GEMMs, weight
/// gradients and cuDNN attention are 8-15% off the published ones; a family further off times
/// another kernel than the published one, or was mismeasured.
inline constexpr double kAgainstPublishedBound = 0.25;

struct FamilyVerdict {
  std::string family;    ///< work::table_family
  std::string rejected;  ///< why auto may not use it; empty: it passes
};

/// One verdict per table of `measured`'s own (before a base is attached), in order: refused
/// cells or device keys against `gpu` (work::check_plausible), times that fall as a shape grows,
/// then the median |difference| of the answers a run would take from `published` (null: the
/// roofline alone; its base attached, fitting `gpu`) against kAgainstPublishedBound.
/// `published_name` names it in the reasons.
std::vector<FamilyVerdict> judge_measured(const work::Calibration& measured,
                                          const topo::GpuSpec& gpu,
                                          const work::Calibration* published,
                                          const std::string& published_name);

/// "3 of 28 families rejected: FAMILY: WHY; ..." (the first `shown` named), or "" when none is.
std::string rejections(const std::vector<FamilyVerdict>& verdicts, std::size_t shown = 2);

}  // namespace hopsim::config
