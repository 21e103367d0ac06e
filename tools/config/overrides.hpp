// --set KEY=VALUE: dotted-path overrides applied to a JSON document before it is parsed.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace hopsim::config {

/// Sets the value at dotted `key` (numbers index arrays) in `doc`, creating objects on the way,
/// and returns its JSON pointer. `value` is parsed as JSON when it can be (numbers,
/// true/false, quoted strings, arrays), else taken as a plain string. Throws ConfigError when
/// the path runs into a non-container.
nlohmann::json::json_pointer apply_override(nlohmann::json& doc, const std::string& key,
                                            const std::string& value);

}  // namespace hopsim::config
