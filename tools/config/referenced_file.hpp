// Files a config names by a string: a preset by name, or a path relative to the config.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tools/config/node.hpp"

namespace hopsim::config {

/// The file that the string at `at` names: a preset of kind `kind` by name ("h100-dgx";
/// relative to the working directory when under it, as reports show it), else a path relative
/// to the file `at` is in.
std::string referenced_file(const Node& at, std::string_view kind);

/// Reads `file`, which the string at `at` names; a file that cannot be read is an error at
/// `at`, naming it: "/cluster: cluster file "x": no such file".
nlohmann::json read_referenced(const Node& at, const std::string& file, std::string_view kind);

}  // namespace hopsim::config
