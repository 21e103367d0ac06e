// A small strong type for dense integer ids: two kinds of id (a GPU's rank, a node's index)
// do not mix, and an id indexes a vector without a cast.
#pragma once

#include <compare>
#include <cstddef>
#include <functional>

#include <fmt/format.h>

namespace hopsim {

/// An id of kind `Tag` over `Rep`: built explicitly from its value, compared with its own kind
/// only. `index()` is its position in a dense table (ids are never negative there).
template <class Tag, class Rep = int>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;

  constexpr explicit StrongId(Rep value) : value_(value) {}

  constexpr Rep value() const { return value_; }

  constexpr std::size_t index() const { return static_cast<std::size_t>(value_); }

  friend constexpr auto operator<=>(StrongId, StrongId) = default;

 private:
  Rep value_{};
};

}  // namespace hopsim

template <class Tag, class Rep>
struct std::hash<hopsim::StrongId<Tag, Rep>> {
  std::size_t operator()(hopsim::StrongId<Tag, Rep> id) const noexcept {
    return std::hash<Rep>{}(id.value());
  }
};

/// Formats as its value: "{}" of a GPU id prints its rank.
template <class Tag, class Rep>
struct fmt::formatter<hopsim::StrongId<Tag, Rep>> : fmt::formatter<Rep> {
  auto format(hopsim::StrongId<Tag, Rep> id, fmt::format_context& ctx) const {
    return fmt::formatter<Rep>::format(id.value(), ctx);
  }
};
