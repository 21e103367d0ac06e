// Chooses the calibration table for "calibration": "auto" (calibration_choice.hpp).
#include "tools/config/calibration_choice.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "tools/config/calibration_config.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/measured_table.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::config {
namespace {

// How far a table's GPU is from `gpu`: the log ratios of their BF16 peaks and HBM bandwidths,
// and of their NVFP4 peaks where both state one. That last tells Blackwell generations apart
// whose BF16 peaks and HBM are alike (a B300 is as near a GB200 as a GB300 by the first two; its
// FP4 rate, and the attention speed that came with it, are the GB300's).
double distance(const work::CalibrationPeaks& p, const topo::GpuSpec& gpu) {
  const double fp4 = p.fp4_tflops && gpu.peak_fp4_tflops > 0
                         ? std::abs(std::log(*p.fp4_tflops / gpu.peak_fp4_tflops))
                         : 0.0;
  return std::abs(std::log(*p.bf16_tflops / gpu.peak_bf16_tflops)) +
         std::abs(std::log(*p.hbm_GBps / gpu.hbm_GBps)) + fp4;
}

// A shipped table that fits the GPU, and its place in auto's order (lower first).
struct Candidate {
  std::string name;
  std::string file;
  std::shared_ptr<work::Calibration> table;
  int rank = 0;
};

// Why the table fits the GPU, for notes and errors.
std::string why_fits(const work::Calibration& table, const topo::GpuSpec& gpu) {
  const std::string model = gpu.name.substr(0, gpu.name.find(' '));
  return calibration_names_gpu(table, gpu.name)
             ? fmt::format("its device, \"{}\", names the {}", table.device, model)
             : fmt::format("its device, \"{}\", lists the {} among its equivalent GPUs",
                           table.device, model);
}

// The judgement of a measured candidate against the first published one (its base attached),
// or the roofline: "" when every family passes, else which were rejected and why.
std::string judge(const Candidate& measured, const std::vector<Candidate>& fitting,
                  const topo::GpuSpec& gpu) {
  const auto published = std::find_if(fitting.begin(), fitting.end(), [](const Candidate& c) {
    return c.table->source != "measured";
  });
  std::optional<work::Calibration> other;
  if (published != fitting.end()) {
    other = *published->table;
    (void)attach_base(*other, published->file, gpu.name);
  }
  return rejections(judge_measured(*measured.table, gpu, other ? &*other : nullptr,
                                   other ? published->name : std::string("the roofline")));
}

// The nearest table by datasheet figures, scaled, where it is nearer than `best`.
void consider_nearest(const Preset& preset, const std::string& file,
                      std::shared_ptr<work::Calibration> table, const topo::GpuSpec& gpu,
                      double& best, CalibrationChoice& nearest) {
  const work::CalibrationPeaks& p = table->peaks;
  if (!p.complete() || gpu.peak_bf16_tflops <= 0 || gpu.hbm_GBps <= 0 || distance(p, gpu) >= best) {
    return;
  }
  best = distance(p, gpu);
  nearest.file = file;
  nearest.scaling = p.scaling();
  nearest.why = fmt::format("no shipped table fits it; {} is the nearest GPU by datasheet figures",
                            table->device);
  nearest.note = fmt::format(
      "auto: no shipped table for the {}; {} ({}) scaled to it: compute-bound times x{:.3f} "
      "(BF16 peak {:g} -> {:g} TFLOP/s), memory-bound x{:.3f} (HBM {:g} -> {:g} GB/s)",
      gpu.name, preset.name, table->device, *p.bf16_tflops / gpu.peak_bf16_tflops, *p.bf16_tflops,
      gpu.peak_bf16_tflops, *p.hbm_GBps / gpu.hbm_GBps, *p.hbm_GBps, gpu.hbm_GBps);
  nearest.table = std::move(table);
}

}  // namespace

CalibrationChoice choose_calibration(const topo::GpuSpec& gpu) {
  std::vector<Candidate> fitting;
  CalibrationChoice nearest;
  double best = std::numeric_limits<double>::infinity();
  for (const Preset& preset : list_presets()) {
    if (preset.kind != "calibration") {
      continue;
    }
    const std::string file = display_path(preset.file);
    const nlohmann::json doc = read_json_file(preset.file.string());
    auto table = std::make_shared<work::Calibration>(parse_calibration(Node(doc, file)));
    if (!table->automatic) {
      continue;
    }
    if (calibration_fits(*table, gpu.name)) {
      // A table made on this GPU before one that lists it as equivalent; measured before
      // published; the first by name among equals.
      const int rank =
          (calibration_names_gpu(*table, gpu.name) ? 0 : 2) + (table->source == "measured" ? 0 : 1);
      fitting.push_back({preset.name, file, std::move(table), rank});
      continue;
    }
    consider_nearest(preset, file, std::move(table), gpu, best, nearest);
  }
  std::stable_sort(fitting.begin(), fitting.end(),
                   [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
  std::string passed_over;
  for (const Candidate& c : fitting) {
    if (c.table->source == "measured") {
      if (const std::string rejected = judge(c, fitting, gpu); !rejected.empty()) {
        passed_over += fmt::format("; the measured {} passed over, {}", c.name, rejected);
        continue;
      }
    }
    return {c.file, c.table, std::nullopt,
            fmt::format("auto: {} ({}), which fits the {}{}", c.name, c.table->device, gpu.name,
                        passed_over),
            why_fits(*c.table, gpu)};
  }
  if (!nearest.table) {
    nearest.note = fmt::format(
        "auto: no shipped table for the {}, and none with datasheet figures to scale: the "
        "roofline",
        gpu.name);
  }
  nearest.note += passed_over;
  return nearest;
}

}  // namespace hopsim::config
