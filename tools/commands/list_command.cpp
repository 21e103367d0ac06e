// `hopsim list`: presets by kind, and the shipped experiments.
#include "tools/commands/list_command.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <system_error>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/commands/command.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::tools {

int list_command() {
  const auto roots = config::preset_roots();
  if (roots.empty()) {
    fmt::print(stderr, "hopsim list: no preset folder found (set HOPSIM_PRESETS to a folder with "
                       "clusters/, models/ and calibration/)\n");
    return 1;
  }
  const auto presets = config::list_presets();
  for (const config::PresetKind& k : config::kPresetKinds) {
    fmt::print("{} (\"{}\": NAME):\n", k.folder, k.key);
    for (const config::Preset& p : presets) {
      if (p.kind == k.key) {
        fmt::print("  {:<24} {}\n", p.name, config::display_path(p.file));
      }
    }
  }
  std::map<std::string, std::filesystem::path> experiments;  // by file name, first root wins
  for (const auto& root : roots) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root / "experiments", ec)) {
      if (e.path().extension() == ".json") {
        experiments.emplace(e.path().filename().string(), e.path());
      }
    }
  }
  fmt::print("experiments (hopsim run NAME):\n");
  for (const auto& [name, file] : experiments) {
    fmt::print("  {:<32} {}\n", file.stem().string(), config::display_path(file));
  }
  fmt::print("preset folders, first match wins: ");
  for (std::size_t i = 0; i < roots.size(); ++i) {
    fmt::print("{}{}", i == 0 ? "" : ", ", config::display_path(roots[i]));
  }
  fmt::print("\n");
  return 0;
}

Command declare_list_command(CLI::App& program) {
  CLI::App* app = program.add_subcommand(
      "list", "list the presets an experiment can name (clusters, models, calibration tables)");
  return {app, [](const std::string& /*command_line*/) { return list_command(); }};
}

}  // namespace hopsim::tools
