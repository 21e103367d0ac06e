// A config key, declared once: its name, its validator (range or choices), unit, default and
// doc line. The parser reads a key through its declaration (Node::read), and the sections that
// allow_only, its "did you mean", `hopsim schema` and docs/reference.md read are lists of the
// same declarations, so a key's name, range and choices cannot differ between what is parsed
// and what is documented; the reference's type text is made from the validator.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace hopsim::config {

/// The default text of a key that must be given.
inline constexpr std::string_view kRequired = "required";
/// Numbers are at most this unless a key says otherwise: products of a few of them stay
/// finite, and far beyond any real cluster (1e12 GB/s, 1e12 TFLOP/s).
inline constexpr double kMaxNumber = 1e12;

/// The unit of a key's values; a key named with a unit's suffix (`_us`, `_GBps`, ...) has it.
enum class Unit : std::uint8_t { None, Microseconds, Milliseconds, Bytes, GB, GBps, Tflops, Mhz };

/// How the values a validator checks sit in the JSON: one value, an array of them, or a
/// [min, max] pair.
enum class Shape : std::uint8_t { Scalar, List, Pair };

/// Which end of a number's range is open, and which message a value outside it gets.
enum class Sign : std::uint8_t {
  InRange,      ///< [lo, hi]
  Positive,     ///< (0, hi]: "must be > 0"
  NonNegative,  ///< [0, hi]: "must be >= 0"
};

// The fields of every declaration, in the order designated initializers take them:
//   name, the validator (its range or choices, lo_key/hi_key where another key of the section
//   bounds it at parse time, shape, `also`: what else a value must be, in words), unit,
//   value (the default, where it is a plain value), fallback (the default in words where it
//   is not: kRequired, "the model's"; with a value, a note after it), doc.

struct IntegerKey {
  std::string_view name;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::string_view lo_key = {};
  std::string_view hi_key = {};
  Shape shape = Shape::Scalar;
  std::string_view also = {};
  Unit unit = Unit::None;
  std::optional<std::int64_t> value = {};
  std::string_view fallback = {};
  std::string_view doc = {};
};

struct NumberKey {
  std::string_view name;
  Sign sign = Sign::InRange;
  double lo = 0;
  double hi = kMaxNumber;
  std::string_view lo_key = {};
  std::string_view hi_key = {};
  Shape shape = Shape::Scalar;
  std::string_view also = {};
  Unit unit = Unit::None;
  std::optional<double> value = {};
  std::string_view fallback = {};
  std::string_view doc = {};
};

struct BooleanKey {
  std::string_view name;
  std::optional<bool> value = {};
  std::string_view fallback = {};
  std::string_view doc = {};
};

struct StringKey {
  std::string_view name;
  bool non_empty = false;
  std::string_view fallback = {};
  std::string_view doc = {};
};

/// A string that must be one of `choices` (read as its index), or with shape List an array of
/// them.
struct ChoiceKey {
  std::string_view name;
  std::span<const std::string_view> choices;
  Shape shape = Shape::Scalar;
  std::string_view also = {};
  std::optional<std::string_view> value = {};
  std::string_view fallback = {};
  std::string_view doc = {};
  /// A doc line made from the choices' own table, instead of `doc`.
  std::string (*table_doc)() = nullptr;
  /// The choices from a table only known when the program runs, instead of `choices`.
  std::span<const std::string_view> (*table_choices)() = nullptr;

  /// The choices, from `table_choices` where it is set.
  std::span<const std::string_view> names() const {
    return table_choices != nullptr ? table_choices() : choices;
  }
};

/// An object, an array of objects, or a value of several types: what it holds is a section of
/// its own or its parser's, and its type text is written here.
struct ValueKey {
  std::string_view name;
  std::string_view type;
  Unit unit = Unit::None;
  std::string_view fallback = {};
  std::string_view doc = {};
};

/// The names of a table's rows, in its order (a choice key's choices, from the model's own
/// table): names_of<&work::OpRow::name>(work::kCollectiveOps).
template <auto Name, class Row, std::size_t N>
constexpr std::array<std::string_view, N> names_of(const std::array<Row, N>& rows) {
  std::array<std::string_view, N> names{};
  for (std::size_t i = 0; i < N; ++i) {
    names[i] = rows[i].*Name;
  }
  return names;
}

/// The same key, its name and validator, as another section documents it.
template <class K>
constexpr K with_doc(K key, std::string_view doc) {
  key.doc = doc;
  return key;
}

/// One declaration, of any kind, as a section lists it.
using KeyRef = std::variant<const IntegerKey*, const NumberKey*, const BooleanKey*,
                            const StringKey*, const ChoiceKey*, const ValueKey*>;

/// One object of a config file whose keys the parser checks.
struct Section {
  std::string_view file;  ///< "experiment", "cluster", "model", "calibration" or "kernel rules"
  std::string_view path;  ///< where in that file, e.g. "/workload (kind collective)"
  std::string_view doc;
  std::span<const KeyRef> keys;
};

std::string_view key_name(KeyRef key);
/// The reference's type: "integer in [1, 2^31]", "\"ring\" or \"tree\"", "number in (0, 1e12]
/// (10^9 bytes/s)", made from the validator.
std::string type_text(KeyRef key);
/// The reference's default: the value ("1", "\"bf16\""), or the fallback text.
std::string default_text(KeyRef key);
std::string doc_text(KeyRef key);
Unit unit_of(KeyRef key);
/// "microseconds", "10^9 bytes/s", ...; empty for Unit::None.
std::string_view unit_words(Unit unit);
/// The unit a key named `name` carries by its suffix; Unit::None if it has none.
Unit unit_of_name(std::string_view name);

/// A bound written as the reference writes it: 2^24, 10^6, 1e12, 0.001.
std::string integer_bound(std::int64_t v);
std::string number_bound(double v);
/// "\"a\", \"b\" or \"c\"".
std::string quoted_choices(std::span<const std::string_view> choices);

/// The declaration of `name` among `section`'s keys; nullptr if it has none.
const KeyRef* find_key(const Section& section, std::string_view name);

}  // namespace hopsim::config
