// Presets by name: a cluster, model or calibration table that an experiment names ("h200-hgx")
// instead of giving a path, found among the shipped configs wherever hopsim runs from.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hopsim::config {

/// The kinds of presets and their folders under a presets root.
struct PresetKind {
  std::string_view key;     ///< the experiment's key: "cluster", "model", "calibration"
  std::string_view folder;  ///< "clusters", "models", "calibration"
};
inline constexpr PresetKind kPresetKinds[] = {
    {"cluster", "clusters"}, {"model", "models"}, {"calibration", "calibration"}};

/// Whether `value` names a preset rather than a file: no '/' and no ".json".
bool is_preset_name(std::string_view value);

/// Where presets are looked for, first match wins: each folder of $HOPSIM_PRESETS
/// (colon-separated), the installed share/hopsim/configs beside the program's bin/, and the
/// source tree's configs/ it was built from. Only folders that exist.
std::vector<std::filesystem::path> preset_roots();

/// The file of preset `name` of the experiment key `key`. Throws ConfigError naming `where`
/// (e.g. "configs/x.json: /cluster") and the presets there are when there is none.
std::filesystem::path find_preset(std::string_view key, const std::string& name,
                                  const std::string& where);

/// The experiment file that `argument` (a command's EXPERIMENT) names: itself when it is a
/// file or looks like a path (a '/' or ".json"); else a shipped experiment by name
/// ("deepseek-v3-moe-ep64"), experiments/NAME.json under the first preset root that has it
/// (preset_roots(): the installed share/hopsim/configs, the source tree's configs/). Throws
/// ConfigError listing the shipped experiments when there is no such name.
std::filesystem::path find_experiment(const std::string& argument);

/// A file path as reports show it: relative to the working directory when it lies under it,
/// else absolute.
std::string display_path(const std::filesystem::path& file);

/// Every preset: per kind, its names and files (first root wins), sorted by name.
struct Preset {
  std::string kind;
  std::string name;
  std::filesystem::path file;
};
std::vector<Preset> list_presets();

}  // namespace hopsim::config
