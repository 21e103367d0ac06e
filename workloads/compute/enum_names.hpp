// Enumerators by name: the settings that name a kernel or recipe in configs (attention kernel,
// FP8 recipe, cross-entropy) keep their names in an array in enum order and look them up here.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace hopsim::work {

/// The enumerator named `name`, whose names are `names` in enum order; none for another name.
template <class Enum, std::size_t N>
constexpr std::optional<Enum> enum_named(const std::array<std::string_view, N>& names,
                                         std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) {
      return static_cast<Enum>(i);
    }
  }
  return std::nullopt;
}

}  // namespace hopsim::work
