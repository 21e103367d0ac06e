// Presets: shipped clusters, models and calibration tables found by name.
#include "tools/config/presets.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tools/config/node.hpp"

namespace hopsim::config {
namespace {

namespace fs = std::filesystem;

std::string_view folder_of(std::string_view key) {
  for (const PresetKind& k : kPresetKinds) {
    if (k.key == key) {
      return k.folder;
    }
  }
  return key;
}

// The program's own file (/proc/self/exe), or empty where the system has none.
fs::path program_file() {
  std::array<char, 4096> buffer{};
  const ssize_t n = ::readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  return n > 0 ? fs::path(std::string(buffer.data(), static_cast<std::size_t>(n))) : fs::path();
}

bool is_folder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The names of the presets of `key` under the roots.
std::vector<std::string> names_of(std::string_view key) {
  std::vector<std::string> names;
  for (const Preset& p : list_presets()) {
    if (p.kind == key) {
      names.push_back(p.name);
    }
  }
  return names;
}

}  // namespace

bool is_preset_name(std::string_view value) {
  return !value.empty() && value.find('/') == std::string_view::npos &&
         !value.ends_with(".json");
}

std::vector<fs::path> preset_roots() {
  std::vector<fs::path> roots;
  const auto add = [&](const fs::path& p) {
    if (!p.empty() && is_folder(p) &&
        std::find(roots.begin(), roots.end(), p.lexically_normal()) == roots.end()) {
      roots.push_back(p.lexically_normal());
    }
  };
  if (const char* env = std::getenv("HOPSIM_PRESETS"); env != nullptr) {
    const std::string list(env);
    std::size_t from = 0;
    while (from <= list.size()) {
      const std::size_t colon = std::min(list.find(':', from), list.size());
      add(fs::path(list.substr(from, colon - from)));
      from = colon + 1;
    }
  }
  if (const fs::path exe = program_file(); !exe.empty()) {
    add(exe.parent_path().parent_path() / "share" / "hopsim" / "configs");
  }
#ifdef HOPSIM_SOURCE_CONFIGS
  add(fs::path(HOPSIM_SOURCE_CONFIGS));
#endif
  return roots;
}

fs::path find_preset(std::string_view key, const std::string& name, const std::string& where) {
  const std::string_view folder = folder_of(key);
  for (const fs::path& root : preset_roots()) {
    const fs::path file = root / folder / (name + ".json");
    std::error_code ec;
    if (fs::is_regular_file(file, ec)) {
      return file;
    }
  }
  const std::vector<std::string> names = names_of(key);
  throw ConfigError(fmt::format(
      "{}: no {} preset \"{}\"{}; give a file path (with a '/' or \".json\") or set "
      "HOPSIM_PRESETS to a folder with {}/",
      where, key, echo(name, 60),
      names.empty() ? std::string(" (no preset folder found)")
                    : fmt::format(" (presets: {})", fmt::join(names, ", ")),
      folder));
}

fs::path find_experiment(const std::string& argument) {
  std::error_code ec;
  if (!is_preset_name(argument) || fs::exists(argument, ec)) {
    return argument;
  }
  std::vector<std::string> names;
  for (const fs::path& root : preset_roots()) {
    const fs::path file = root / "experiments" / (argument + ".json");
    if (fs::is_regular_file(file, ec)) {
      return file;
    }
    for (const fs::directory_entry& e : fs::directory_iterator(root / "experiments", ec)) {
      if (e.path().extension() == ".json") {
        names.push_back(e.path().stem().string());
      }
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  throw ConfigError(fmt::format(
      "{}: no such file, nor a shipped experiment of that name{}; give a file path (with a '/' "
      "or \".json\") or set HOPSIM_PRESETS to a folder with experiments/",
      echo(argument, 60),
      names.empty() ? std::string(" (no preset folder found)")
                    : fmt::format(" (experiments: {})", fmt::join(names, ", "))));
}

std::string display_path(const fs::path& file) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  const fs::path absolute = fs::absolute(file, ec).lexically_normal();
  if (!cwd.empty()) {
    const fs::path relative = absolute.lexically_relative(cwd);
    if (!relative.empty() && *relative.begin() != "..") {
      return relative.string();
    }
  }
  return absolute.string();
}

std::vector<Preset> list_presets() {
  std::map<std::pair<std::string, std::string>, fs::path> found;
  for (const fs::path& root : preset_roots()) {
    for (const PresetKind& k : kPresetKinds) {
      std::error_code ec;
      for (const fs::directory_entry& e : fs::directory_iterator(root / k.folder, ec)) {
        if (e.path().extension() == ".json") {
          found.emplace(std::pair{std::string(k.key), e.path().stem().string()}, e.path());
        }
      }
    }
  }
  std::vector<Preset> out;
  for (const auto& [key, file] : found) {
    out.push_back({key.first, key.second, file});
  }
  return out;
}

}  // namespace hopsim::config
