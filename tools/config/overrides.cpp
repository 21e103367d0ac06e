// Dotted-path overrides.
#include "tools/config/overrides.hpp"

#include <fmt/format.h>

#include "tools/config/json_file.hpp"
#include "tools/config/node.hpp"

namespace hopsim::config {

Applied apply_override(nlohmann::json& doc, const std::string& key, const std::string& value) {
  check_json_structure(value, "--set " + key);
  nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
  if (parsed.is_discarded()) {
    parsed = value;
  }
  const bool remove = parsed.is_null();
  nlohmann::json* at = &doc;
  Applied out;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t dot = key.find('.', begin);
    const bool last = dot == std::string::npos;
    const std::string part = key.substr(begin, last ? dot : dot - begin);
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
      out.pointer /= index;
      if (last && remove) {
        throw ConfigError(fmt::format("--set {}=null: an array element cannot be removed; set "
                                      "the whole array",
                                      key));
      }
      at = &(*at)[index];
    } else if (at->is_object() || at->is_null()) {
      out.pointer /= part;
      if (last && remove) {  // removed where it is, nothing created on the way
        if (at->is_object() && at->contains(part)) {
          out.before = at->at(part).dump();
          at->erase(part);
        }
        return out;
      }
      if (remove && !(at->is_object() && at->contains(part))) {
        return out;  // nothing there to remove
      }
      at = &(*at)[part];
    } else {
      throw ConfigError(
          fmt::format("--set {}: \"{}\" is inside a {}, not an object", key, part,
                      at->type_name()));
    }
    if (last) {
      break;
    }
    begin = dot + 1;
  }
  out.before = at->is_null() ? std::nullopt : std::optional<std::string>(at->dump());
  *at = std::move(parsed);
  out.after = at->dump();
  return out;
}

}  // namespace hopsim::config
