// Chooses the calibration table for "calibration": "auto" (calibration_choice.hpp).
#include "tools/config/calibration_choice.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "tools/config/calibration_config.hpp"
#include "tools/config/json_file.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::config {
namespace {

// How far a table's GPU is from `gpu`: the log ratios of their BF16 peaks and HBM bandwidths.
double distance(const work::CalibrationPeaks& p, const topo::GpuSpec& gpu) {
  return std::abs(std::log(*p.bf16_tflops / gpu.peak_bf16_tflops)) +
         std::abs(std::log(*p.hbm_GBps / gpu.hbm_GBps));
}

}  // namespace

CalibrationChoice choose_calibration(const topo::GpuSpec& gpu) {
  CalibrationChoice nearest;
  CalibrationChoice fitting;
  int fitting_rank = 3;
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
      const int rank = (calibration_names_gpu(*table, gpu.name) ? 0 : 2) +
                       (table->source == "measured" ? 0 : 1);
      if (rank < fitting_rank) {
        fitting_rank = rank;
        fitting.file = file;
        fitting.note = fmt::format("auto: {} ({}), which fits the {}", preset.name,
                                   table->device, gpu.name);
        fitting.table = std::move(table);
      }
      continue;
    }
    const work::CalibrationPeaks& p = table->peaks;
    if (p.complete() && gpu.peak_bf16_tflops > 0 && gpu.hbm_GBps > 0 && distance(p, gpu) < best) {
      best = distance(p, gpu);
      nearest.file = file;
      nearest.scaling = p.scaling();
      nearest.note = fmt::format(
          "auto: no shipped table for the {}; {} ({}) scaled to it: compute-bound times x{:.3f} "
          "(BF16 peak {:g} -> {:g} TFLOP/s), memory-bound x{:.3f} (HBM {:g} -> {:g} GB/s)",
          gpu.name, preset.name, table->device, *p.bf16_tflops / gpu.peak_bf16_tflops,
          *p.bf16_tflops, gpu.peak_bf16_tflops, *p.hbm_GBps / gpu.hbm_GBps, *p.hbm_GBps,
          gpu.hbm_GBps);
      nearest.table = std::move(table);
    }
  }
  if (fitting.table) {
    return fitting;
  }
  if (!nearest.table) {
    nearest.note = fmt::format(
        "auto: no shipped table for the {}, and none with datasheet figures to scale: the "
        "roofline",
        gpu.name);
  }
  return nearest;
}

}  // namespace hopsim::config
