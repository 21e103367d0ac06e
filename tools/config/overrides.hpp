// --set KEY=VALUE: dotted-path overrides applied to a JSON document before it is parsed.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace hopsim::config {

/// What one override did to its document: where, and the value before and after (JSON text;
/// unset where there was none, or none is left).
struct Applied {
  nlohmann::json::json_pointer pointer;
  std::optional<std::string> before;
  std::optional<std::string> after;
};

/// Sets the value at dotted `key` (numbers index arrays) in `doc`, creating objects on the way.
/// `value` is parsed as JSON when it can be (numbers, true/false, quoted strings, arrays), else
/// taken as a plain string; `null` removes the key (an optional key takes its default; a
/// required one is then missing). Throws ConfigError when the path runs into a non-container.
Applied apply_override(nlohmann::json& doc, const std::string& key, const std::string& value);

}  // namespace hopsim::config
