// The reference's text of a declared key, made from its validator.
#include "tools/config/key.hpp"

#include <array>
#include <bit>
#include <utility>

#include <fmt/format.h>

namespace hopsim::config {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// A range's upper end that the reference writes open: 2^63 - 1 as "2^63)", 2^61 - 1 as "2^61)".
bool open_end(std::int64_t v) {
  return v == INT64_MAX ||
         (v >= (std::int64_t{1} << 31) && std::has_single_bit(static_cast<std::uint64_t>(v) + 1));
}

std::string range_text(std::string_view lo_open, const std::string& lo, const std::string& hi,
                       bool hi_open) {
  return fmt::format("{}{}, {}{}", lo_open, lo, hi, hi_open ? ")" : "]");
}

std::string integer_range(const IntegerKey& k) {
  const std::string lo = k.lo_key.empty() ? integer_bound(k.lo) : std::string(k.lo_key);
  const bool open = k.hi_key.empty() && open_end(k.hi);
  const std::string hi = k.hi_key.empty()
                             ? integer_bound(open && k.hi != INT64_MAX ? k.hi + 1 : k.hi)
                             : std::string(k.hi_key);
  return range_text("[", lo, hi, open);
}

std::string number_range(const NumberKey& k) {
  const std::string hi = k.hi_key.empty() ? number_bound(k.hi) : std::string(k.hi_key);
  switch (k.sign) {
    case Sign::Positive:
      return range_text("(", "0", hi, false);
    case Sign::NonNegative:
      return range_text("[", "0", hi, false);
    case Sign::InRange:
      break;
  }
  return range_text("[", k.lo_key.empty() ? number_bound(k.lo) : std::string(k.lo_key), hi, false);
}

// "integer in [1, 2^31]", "array of integers in ...", "[min, max], each an integer in ...", with
// the unit and what else a value must be.
std::string shaped(Shape shape, std::string_view one, std::string_view many,
                   const std::string& range, Unit unit, std::string_view also) {
  std::string out;
  switch (shape) {
    case Shape::Scalar:
      out = fmt::format("{} in {}", one, range);
      break;
    case Shape::List:
      out = fmt::format("array of {} in {}", many, range);
      break;
    case Shape::Pair:
      out = fmt::format("[min, max], each {} in {}", one == "integer" ? "an integer" : "a number",
                        range);
      break;
  }
  if (unit != Unit::None) {
    out += fmt::format(" ({})", unit_words(unit));
  }
  if (!also.empty()) {
    out += fmt::format(", {}", also);
  }
  return out;
}

std::string with_note(std::string value, std::string_view note) {
  return note.empty() ? value : fmt::format("{} ({})", value, note);
}

}  // namespace

std::string integer_bound(std::int64_t v) {
  if (v == INT64_MAX) {
    return "2^63";
  }
  const auto u = static_cast<std::uint64_t>(v);
  if (v >= (std::int64_t{1} << 14) && std::has_single_bit(u)) {
    return fmt::format("2^{}", std::countr_zero(u));
  }
  int tens = 0;
  std::int64_t rest = v;
  while (rest >= 10 && rest % 10 == 0) {
    rest /= 10;
    ++tens;
  }
  if (rest == 1 && tens >= 6) {
    return fmt::format("10^{}", tens);
  }
  return std::to_string(v);
}

std::string number_bound(double v) {
  std::string s = fmt::format("{:g}", v);  // 1e+12, 1e-06, 0.001
  const std::size_t e = s.find('e');
  if (e == std::string::npos) {
    return s;
  }
  std::string exponent = s.substr(e + 1);
  const bool negative = exponent.front() == '-';
  exponent = exponent.substr(1);
  exponent.erase(0, exponent.find_first_not_of('0'));
  return s.substr(0, e + 1) + (negative ? "-" : "") + exponent;
}

std::string quoted_choices(std::span<const std::string_view> choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    out += i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ";
    out += fmt::format("\"{}\"", choices[i]);
  }
  return out;
}

std::string_view key_name(KeyRef key) {
  return std::visit([](const auto* k) { return k->name; }, key);
}

std::string type_text(KeyRef key) {
  return std::visit(
      Overloaded{
          [](const IntegerKey* k) {
            return shaped(k->shape, "integer", "integers", integer_range(*k), k->unit, k->also);
          },
          [](const NumberKey* k) {
            return shaped(k->shape, "number", "numbers", number_range(*k), k->unit, k->also);
          },
          [](const BooleanKey*) { return std::string("boolean"); },
          [](const StringKey* k) {
            return std::string(k->non_empty ? "non-empty string" : "string");
          },
          [](const ChoiceKey* k) {
            std::string out = quoted_choices(k->names());
            if (k->shape == Shape::List) {
              out = "array of " + out;
            }
            return k->also.empty() ? out : fmt::format("{}, {}", out, k->also);
          },
          [](const ValueKey* k) {
            return k->unit == Unit::None ? std::string(k->type)
                                         : fmt::format("{} ({})", k->type, unit_words(k->unit));
          },
      },
      key);
}

std::string default_text(KeyRef key) {
  return std::visit(Overloaded{
                        [](const IntegerKey* k) {
                          return k->value ? with_note(std::to_string(*k->value), k->fallback)
                                          : std::string(k->fallback);
                        },
                        [](const NumberKey* k) {
                          return k->value ? with_note(number_bound(*k->value), k->fallback)
                                          : std::string(k->fallback);
                        },
                        [](const BooleanKey* k) {
                          return k->value ? with_note(*k->value ? "true" : "false", k->fallback)
                                          : std::string(k->fallback);
                        },
                        [](const StringKey* k) { return std::string(k->fallback); },
                        [](const ChoiceKey* k) {
                          return k->value ? with_note(fmt::format("\"{}\"", *k->value), k->fallback)
                                          : std::string(k->fallback);
                        },
                        [](const ValueKey* k) { return std::string(k->fallback); },
                    },
                    key);
}

std::string doc_text(KeyRef key) {
  if (const auto* const* choice = std::get_if<const ChoiceKey*>(&key);
      choice != nullptr && (*choice)->table_doc != nullptr) {
    return (*choice)->table_doc();
  }
  return std::visit([](const auto* k) { return std::string(k->doc); }, key);
}

Unit unit_of(KeyRef key) {
  return std::visit(Overloaded{
                        [](const IntegerKey* k) { return k->unit; },
                        [](const NumberKey* k) { return k->unit; },
                        [](const ValueKey* k) { return k->unit; },
                        [](const auto*) { return Unit::None; },
                    },
                    key);
}

std::string_view unit_words(Unit unit) {
  switch (unit) {
    case Unit::None:
      return "";
    case Unit::Microseconds:
      return "microseconds";
    case Unit::Milliseconds:
      return "milliseconds";
    case Unit::Bytes:
      return "bytes";
    case Unit::GB:
      return "10^9 bytes";
    case Unit::GBps:
      return "10^9 bytes/s";
    case Unit::Tflops:
      return "10^12 FLOP/s";
    case Unit::Mhz:
      return "MHz";
  }
  return "";
}

Unit unit_of_name(std::string_view name) {
  // Longer suffixes first: "_GBps" before "_GB".
  constexpr std::array<std::pair<std::string_view, Unit>, 7> kSuffixes{{
      {"_us", Unit::Microseconds},
      {"_ms", Unit::Milliseconds},
      {"_bytes", Unit::Bytes},
      {"_GBps", Unit::GBps},
      {"_GB", Unit::GB},
      {"_tflops", Unit::Tflops},
      {"_mhz", Unit::Mhz},
  }};
  if (name == "bytes") {
    return Unit::Bytes;
  }
  for (const auto& [suffix, unit] : kSuffixes) {
    if (name.ends_with(suffix)) {
      return unit;
    }
  }
  return Unit::None;
}

const KeyRef* find_key(const Section& section, std::string_view name) {
  for (const KeyRef& k : section.keys) {
    if (key_name(k) == name) {
      return &k;
    }
  }
  return nullptr;
}

}  // namespace hopsim::config
