// Files a config names by a string (referenced_file.hpp).
#include "tools/config/referenced_file.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "tools/config/json_file.hpp"
#include "tools/config/presets.hpp"

namespace hopsim::config {

std::string referenced_file(const Node& at, std::string_view kind) {
  const std::string value = at.string();
  if (is_preset_name(value)) {
    return display_path(find_preset(
        kind, value, fmt::format("{}: {}", at.origin()->describe(at.path()), at.path().to_string())));
  }
  const std::filesystem::path p(value);
  if (p.is_absolute()) {
    return value;
  }
  return (std::filesystem::path(at.file()).parent_path() / p).lexically_normal().string();
}

nlohmann::json read_referenced(const Node& at, const std::string& file, std::string_view kind) {
  if (const std::string problem = file_problem(file); !problem.empty()) {
    at.fail(fmt::format("{} file \"{}\": {}", kind, file, problem));
  }
  return read_json_file(file);
}

}  // namespace hopsim::config
