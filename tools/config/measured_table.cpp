// Judges a measured table family by family for "calibration": "auto" (measured_table.hpp).
#include "tools/config/measured_table.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/config/calibration_config.hpp"
#include "workloads/compute/calibration_check.hpp"
#include "workloads/compute/table_query.hpp"
#include "workloads/experiment/experiment.hpp"

namespace hopsim::config {
namespace {

// The table index of a finding's pointer ("/tables/3/time_us/17": 3), or none.
std::optional<std::size_t> table_of(const std::string& path) {
  constexpr std::string_view kPrefix = "/tables/";
  if (!path.starts_with(kPrefix)) {
    return std::nullopt;
  }
  return std::stoul(path.substr(kPrefix.size()));
}

double median_magnitude(std::vector<double> d) {
  std::transform(d.begin(), d.end(), d.begin(), [](double e) { return std::abs(e); });
  std::sort(d.begin(), d.end());
  const std::size_t n = d.size();
  return n % 2 == 1 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

// The verdicts of work::check_plausible: a refused device key rejects every family.
void judge_plausible(const work::Calibration& measured, const topo::GpuSpec& gpu,
                     std::vector<FamilyVerdict>& out) {
  const work::CalibrationFindings found = work::check_plausible(measured, figures_of(gpu));
  for (const work::CalibrationProblem& p : found.problems) {
    const std::optional<std::size_t> i = table_of(p.path);
    for (std::size_t t = 0; t < out.size(); ++t) {
      if ((!i || *i == t) && out[t].rejected.empty()) {
        out[t].rejected = fmt::format("{}: {}", p.path, p.message);
      }
    }
  }
  for (const Problem& w : found.warnings) {
    const std::optional<std::size_t> i = table_of(w.path);
    if (i && *i < out.size() && out[*i].rejected.empty()) {
      out[*i].rejected = w.message;
    }
  }
}

}  // namespace

std::vector<FamilyVerdict> judge_measured(const work::Calibration& measured,
                                          const topo::GpuSpec& gpu,
                                          const work::Calibration* published,
                                          const std::string& published_name) {
  std::vector<FamilyVerdict> out;
  for (const work::CalibrationTable& t : measured.tables) {
    out.push_back({work::table_family(t), {}});
  }
  judge_plausible(measured, gpu, out);
  const work::ComputeModel model(published, work::roofline_of(gpu));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::vector<double> errors = work::answer_errors(model, measured.tables[i]);
    if (!out[i].rejected.empty() || errors.empty()) {
      continue;
    }
    if (const double off = median_magnitude(errors); off > kAgainstPublishedBound) {
      out[i].rejected =
          fmt::format("its {} cells are a median {:.1f}% off what {} answers (at most {:.0f}%)",
                      errors.size(), off * 100, published_name, kAgainstPublishedBound * 100);
    }
  }
  return out;
}

std::string rejections(const std::vector<FamilyVerdict>& verdicts, std::size_t shown) {
  std::vector<std::string> named;
  std::size_t count = 0;
  for (const FamilyVerdict& v : verdicts) {
    if (v.rejected.empty()) {
      continue;
    }
    if (++count <= shown) {
      named.push_back(fmt::format("{}: {}", v.family, v.rejected));
    }
  }
  if (count == 0) {
    return {};
  }
  return fmt::format("{} of {} families rejected: {}{}", count, verdicts.size(),
                     fmt::join(named, "; "), count > shown ? "; ..." : "");
}

}  // namespace hopsim::config
