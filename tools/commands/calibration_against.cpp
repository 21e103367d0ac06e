// One calibration table read against another (calibration_against.hpp).
#include "tools/commands/calibration_against.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "tools/config/calibration_config.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"
#include "workloads/compute/table_query.hpp"
#include "workloads/experiment/experiment.hpp"

namespace hopsim::tools {

namespace {

// The other table as a run would read it, and the scaling of its times to `gpu`.
struct Against {
  work::Calibration calibration;
  std::optional<work::TableScaling> scaling;
  std::string note;  // what was attached or scaled
};

Against read_against(const std::string& path, const topo::GpuSpec& gpu) {
  Against a{config::parse_calibration(config::Node(config::read_json_file(path), path)), {}, {}};
  a.scaling = config::scaling_to(a.calibration, gpu.name, path);
  // Held as a run would hold it (its cells against the GPU, or against its own GPU's datasheet
  // figures where it is scaled): an implausible one is an error naming its cell.
  if (a.scaling) {
    (void)config::check_calibration_plausible(a.calibration,
                                              config::datasheet_figures_of(a.calibration), path);
  } else {
    (void)config::check_calibration_on(a.calibration, gpu, path);
  }
  if (a.scaling) {
    a.note = fmt::format("its times scaled from \"{}\" to the {}", a.calibration.device, gpu.name);
  }
  const std::string base = config::attach_base(a.calibration, path, gpu.name);
  if (!base.empty()) {
    a.note += (a.note.empty() ? "" : "; ") + base;
  }
  return a;
}

std::string point_label(const work::CalibrationTable& t, const std::vector<std::int64_t>& p) {
  std::string out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    out += fmt::format("{}{}={}", i == 0 ? "" : " ", t.axes[i].name, p[i]);
  }
  return out;
}

std::string source_label(const work::ComputeCost& c) {
  std::string out(work::source_name(c.source));
  if (!c.impl.empty()) {
    out += fmt::format(" {}", c.impl);
  }
  return out + (c.from_base ? " (base)" : "");
}

// A signed difference as a percentage, "+3.1%"; one that rounds to zero is "+0.0%", not "-0.0%".
std::string percent(double fraction) {
  const double p = 100 * fraction;
  return fmt::format("{:+.1f}%", std::abs(p) < 0.05 ? 0.0 : p);
}

double median(std::vector<double> d) {
  std::sort(d.begin(), d.end());
  const std::size_t n = d.size();
  return n % 2 == 1 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
}

// "12 cells, median +3.1%, -2.0% to +9.4%, median |error| 4.0%" of signed differences.
std::string spread(const std::vector<double>& d) {
  if (d.empty()) {
    return "no cells";
  }
  std::vector<double> magnitudes(d.size());
  std::transform(d.begin(), d.end(), magnitudes.begin(), [](double e) { return std::abs(e); });
  const auto [low, high] = std::minmax_element(d.begin(), d.end());
  return fmt::format("{} cells, median {}, {} to {}, median |error| {:.1f}%", d.size(),
                     percent(median(d)), percent(*low), percent(*high), 100 * median(magnitudes));
}

}  // namespace

int print_against(const work::Calibration& table, const std::string& table_path,
                  const std::string& against_path, const topo::GpuSpec& gpu, bool cells) {
  const Against other = read_against(against_path, gpu);
  const work::ComputeModel model(&other.calibration, work::roofline_of(gpu), other.scaling);
  fmt::print("{} against {} on the {}{}{}\n", table_path, against_path, gpu.name,
             other.note.empty() ? "" : ": ", other.note);
  fmt::print(
      "error = (answer - cell) / cell: positive where {} prices the kernel slower than "
      "{} timed it\n",
      against_path, table_path);
  std::vector<double> all;
  for (const work::CalibrationTable& t : table.tables) {
    if (t.tier != 0) {
      continue;
    }
    if (cells) {
      fmt::print("\n{}\n", work::table_family(t));
    }
    std::vector<double> family;
    std::map<std::string, int> sources;  // how many cells each source answered
    for (std::size_t c = 0; c < t.time_us.size(); ++c) {
      if (!t.time_us[c]) {
        continue;
      }
      const std::vector<std::int64_t> p = t.cell_point(c);
      std::string why;
      const auto answer = work::model_answer(model, t, p, why);
      if (!answer) {
        fmt::print("  {}{:<30} {:>10.1f} us  no answer: {}\n",
                   cells ? "" : work::table_family(t) + ": ", point_label(t, p), *t.time_us[c],
                   why);
        continue;
      }
      const double us = answer->time.seconds() * 1e6;
      const double error = us / *t.time_us[c] - 1;
      family.push_back(error);
      ++sources[source_label(*answer)];
      if (!cells) {
        continue;
      }
      fmt::print("  {:<30} {:>10.1f} us  {:>10.1f} us  {:>8}  {}\n", point_label(t, p),
                 *t.time_us[c], us, percent(error), source_label(*answer));
    }
    std::string answered;
    for (const auto& [source, count] : sources) {
      answered += fmt::format("{}{} {}", answered.empty() ? "" : ", ", count, source);
    }
    if (!cells) {
      fmt::print("{}\n", work::table_family(t));
    }
    fmt::print("  {}\n  answered by: {}\n", spread(family), answered.empty() ? "none" : answered);
    all.insert(all.end(), family.begin(), family.end());
  }
  fmt::print("\nall: {}\n", spread(all));
  return 0;
}

}  // namespace hopsim::tools
