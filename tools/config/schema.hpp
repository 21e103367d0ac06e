// Every section of every config file, in the order the reference lists them: the parser's
// allow-lists are these sections' declared keys (key.hpp), so the reference (hopsim schema,
// docs/reference.md) cannot drift from what is parsed.
#pragma once

#include <span>

#include "tools/config/key.hpp"

namespace hopsim::config {

/// Every section, in reference order.
std::span<const Section* const> schema();

}  // namespace hopsim::config
