// Dotted-path overrides.
#include "tools/config/overrides.hpp"

#include <fmt/format.h>

#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"

namespace hopsim::config {

nlohmann::json::json_pointer apply_override(nlohmann::json& doc, const std::string& key,
                                            const std::string& value) {
  check_json_structure(value, "--set " + key);
  nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
  if (parsed.is_discarded()) {
    parsed = value;
  }
  nlohmann::json* at = &doc;
  nlohmann::json::json_pointer pointer;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t dot = key.find('.', begin);
    const std::string part = key.substr(begin, dot == std::string::npos ? dot : dot - begin);
    if (part.empty()) {
      throw ConfigError(fmt::format("--set {}: empty key segment", key));
    }
    if (at->is_array()) {
      const bool digits = part.size() <= 9 && part.find_first_not_of("0123456789") == std::string::npos;
      const std::size_t index = digits ? std::stoul(part) : at->size();
      if (!digits || index >= at->size()) {
        throw ConfigError(fmt::format("--set {}: \"{}\" is not an index of an array of {}", key,
                                      part, at->size()));
      }
      at = &(*at)[index];
      pointer /= index;
    } else if (at->is_object() || at->is_null()) {
      at = &(*at)[part];
      pointer /= part;
    } else {
      throw ConfigError(
          fmt::format("--set {}: \"{}\" is inside a {}, not an object", key, part,
                      at->type_name()));
    }
    if (dot == std::string::npos) {
      break;
    }
    begin = dot + 1;
  }
  *at = std::move(parsed);
  return pointer;
}

}  // namespace hopsim::config
