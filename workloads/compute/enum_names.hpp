// Enumerators by name: the settings that name a kernel or recipe in configs (attention kernel,
// FP8 recipe, cross-entropy) keep their names in an array in enum order and look them up here;
// tables of algorithms list their names for messages and the reference.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

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

/// Whether row i of `table` has enumerator i as its `key`, so that the enum indexes the table.
template <class Row, std::size_t N, class Enum>
constexpr bool in_enum_order(const std::array<Row, N>& table, Enum Row::*key) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].*key) != i) {
      return false;
    }
  }
  return true;
}

/// `names` as one list, "a, b or c": `last` joins the last two (" or ", " and "), ", " the rest.
inline std::string name_list(std::span<const std::string> names, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? "" : i + 1 == names.size() ? last : ", ";
    out += names[i];
  }
  return out;
}

/// The `name`s of the rows of `table` that `keep` keeps (every row: null), in table order, as
/// one list (name_list), each in double quotes with `quoted`.
template <class Row, std::size_t N>
std::string row_names(const std::array<Row, N>& table,
                      std::type_identity_t<bool (*)(const Row&)> keep, bool quoted,
                      std::string_view last) {
  std::array<std::string, N> names;
  std::size_t kept = 0;
  for (const Row& row : table) {
    if (keep == nullptr || keep(row)) {
      const std::string name(row.name);
      names[kept++] = quoted ? "\"" + name + "\"" : name;
    }
  }
  return name_list(std::span<const std::string>(names.data(), kept), last);
}

}  // namespace hopsim::work
