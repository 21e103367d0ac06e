// Reading a key through its declaration: its validator's check, else its declared default.
#include <algorithm>

#include <fmt/format.h>

#include "sim/assert.hpp"
#include "tools/config/node.hpp"

namespace hopsim::config {
namespace {

// A key absent from `n`: a required key's "missing key" error; a key with a described default
// (the model's, another key's) is the parser's to fill in, with read_if.
template <class K>
[[noreturn]] void absent(const Node& n, const K& key) {
  HOPSIM_ASSERT(key.fallback == kRequired,
                "key \"{}\" has no default value; its parser reads it with read_if", key.name);
  n.expect_object();
  n.fail(fmt::format("missing key \"{}\"", key.name));
}

// The range a read checks: the declaration's, or where another key bounds it, that key's value.
template <class T, class K>
std::pair<T, T> range_of(const K& key, const Bounds<T>& bounds) {
  HOPSIM_ASSERT(
      bounds.lo.has_value() == !key.lo_key.empty() && bounds.hi.has_value() == !key.hi_key.empty(),
      "key \"{}\": a bound named by another key is read with that key's value", key.name);
  return {bounds.lo.value_or(key.lo), bounds.hi.value_or(key.hi)};
}

double number_of(const Node& n, const NumberKey& key, double lo, double hi) {
  switch (key.sign) {
    case Sign::Positive:
      return n.positive(hi);
    case Sign::NonNegative:
      return n.non_negative(hi);
    case Sign::InRange:
      break;
  }
  return n.number_in(lo, hi);
}

}  // namespace

std::int64_t Node::read(const IntegerKey& key, Bounds<std::int64_t> bounds) const {
  const auto [lo, hi] = range_of(key, bounds);
  if (has(key.name)) {
    return at(key.name).integer_in(lo, hi);
  }
  if (key.value) {
    return *key.value;
  }
  absent(*this, key);
}

double Node::read(const NumberKey& key, Bounds<double> bounds) const {
  const auto [lo, hi] = range_of(key, bounds);
  if (has(key.name)) {
    return number_of(at(key.name), key, lo, hi);
  }
  if (key.value) {
    return *key.value;
  }
  absent(*this, key);
}

bool Node::read(const BooleanKey& key) const {
  if (has(key.name)) {
    return at(key.name).boolean();
  }
  if (key.value) {
    return *key.value;
  }
  absent(*this, key);
}

std::string Node::read(const StringKey& key) const {
  if (!has(key.name)) {
    absent(*this, key);
  }
  const Node n = at(key.name);
  std::string s = n.string();
  if (key.non_empty && s.empty()) {
    n.fail("must not be empty");
  }
  return s;
}

std::size_t Node::read(const ChoiceKey& key) const {
  HOPSIM_ASSERT(key.shape == Shape::Scalar, "key \"{}\" is a list; read its items", key.name);
  if (has(key.name)) {
    return at(key.name).index_of(key.names());
  }
  if (key.value) {
    const auto names = key.names();
    const auto it = std::find(names.begin(), names.end(), *key.value);
    HOPSIM_ASSERT(it != names.end(), "key \"{}\": default \"{}\" is not a choice", key.name,
                  *key.value);
    return static_cast<std::size_t>(it - names.begin());
  }
  absent(*this, key);
}

std::int64_t Node::read_item(const IntegerKey& key) const {
  HOPSIM_ASSERT(key.lo_key.empty() && key.hi_key.empty(), "key \"{}\" has a bound from another key",
                key.name);
  return integer_in(key.lo, key.hi);
}

double Node::read_item(const NumberKey& key) const {
  HOPSIM_ASSERT(key.lo_key.empty() && key.hi_key.empty(), "key \"{}\" has a bound from another key",
                key.name);
  return number_of(*this, key, key.lo, key.hi);
}

std::size_t Node::read_item(const ChoiceKey& key) const {
  return index_of(key.names());
}

std::string Node::read_text(KeyRef key) const {
  if (const auto* const* integer = std::get_if<const IntegerKey*>(&key)) {
    return std::to_string(read(**integer));
  }
  if (const auto* const* choice = std::get_if<const ChoiceKey*>(&key)) {
    return std::string((*choice)->names()[read(**choice)]);
  }
  if (const auto* const* text = std::get_if<const StringKey*>(&key)) {
    return read(**text);
  }
  HOPSIM_ASSERT(false, "key \"{}\" is not read as text", key_name(key));
  return {};
}

}  // namespace hopsim::config
