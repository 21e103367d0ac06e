// A JSON node that remembers its file and JSON pointer, for precise config errors.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/config/key.hpp"

namespace hopsim::config {

/// Bad user input: the message names the file, the JSON pointer, what was found and expected.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where a document came from: its file, and the values that --set arguments put into it,
/// so that an error in such a value names the argument rather than the file.
struct Origin {
  using Pointer = nlohmann::json::json_pointer;
  std::string file;
  std::vector<std::pair<Pointer, std::string>> overrides;  ///< where, and "--set KEY=VALUE"

  /// The --set argument that wrote `path` or a value above it (the latest such), else the file.
  std::string describe(const Pointer& path) const;
};

/// A key's bounds at parse time, where another key of the section gives them (lo_key, hi_key).
template <class T>
struct Bounds {
  std::optional<T> lo = std::nullopt;
  std::optional<T> hi = std::nullopt;
};

class Node {
 public:
  using Pointer = nlohmann::json::json_pointer;

  Node(const nlohmann::json& json, std::string file, Pointer path = Pointer())
      : json_(&json), origin_(std::make_shared<Origin>(Origin{std::move(file), {}})),
        path_(std::move(path)) {}
  Node(const nlohmann::json& json, std::shared_ptr<const Origin> origin, Pointer path = Pointer())
      : json_(&json), origin_(std::move(origin)), path_(std::move(path)) {}

  /// The child at `key`; a missing key is an error that names this node.
  Node at(std::string_view key) const;
  /// The element at `index` of an array.
  Node at(std::size_t index) const;
  bool has(std::string_view key) const;
  std::size_t size() const { return json_->size(); }

  bool is_object() const { return json_->is_object(); }
  bool is_array() const { return json_->is_array(); }
  bool is_string() const { return json_->is_string(); }
  void expect_object() const;
  void expect_array() const;

  double number() const;
  static constexpr double kMaxNumber = config::kMaxNumber;
  /// A number that must be > 0 and at most `max` (bandwidths, sizes, peaks).
  double positive(double max = kMaxNumber) const;
  /// A number in [lo, hi] (efficiencies, shares).
  double number_in(double lo, double hi) const;
  /// A number that must be >= 0 and at most `max` (latencies, start times).
  double non_negative(double max = kMaxNumber) const;
  std::int64_t integer() const;
  /// An integer in [lo, hi].
  std::int64_t integer_in(std::int64_t lo, std::int64_t hi) const;
  bool boolean() const;
  std::string string() const;
  /// A string that must be one of `choices`.
  std::string one_of(std::initializer_list<std::string_view> choices) const;
  /// The index in `choices` of a string that must be one of them.
  std::size_t index_of(std::span<const std::string_view> choices) const;

  /// Rejects typos: every key present must be one of `section`'s (the reference's) keys.
  void allow_only(const Section& section) const;

  // Reading a key of this object through its declaration (key.hpp): the value if present,
  // checked against the validator; else the declared default, or "missing key" for a required
  // key. A key whose default is not a plain value is read with read_if. Where another key
  // bounds it (lo_key, hi_key), `bounds` gives that key's value.
  std::int64_t read(const IntegerKey& key, Bounds<std::int64_t> bounds = {}) const;
  double read(const NumberKey& key, Bounds<double> bounds = {}) const;
  bool read(const BooleanKey& key) const;
  std::string read(const StringKey& key) const;
  /// The index of the value in key.choices.
  std::size_t read(const ChoiceKey& key) const;

  template <class E>
  E read_as(const ChoiceKey& key) const {
    return static_cast<E>(read(key));
  }

  /// The value if the key is present.
  template <class K>
  auto read_if(const K& key) const -> std::optional<decltype(read(key))> {
    if (!has(key.name)) {
      return std::nullopt;
    }
    return read(key);
  }

  /// This node as one element of a key whose shape is List or Pair (or as a value of the key).
  std::int64_t read_item(const IntegerKey& key) const;
  double read_item(const NumberKey& key) const;
  std::size_t read_item(const ChoiceKey& key) const;
  /// A scalar key's value as text (a choice's name, an integer in decimal).
  std::string read_text(KeyRef key) const;

  template <class K>

  requires requires(const K& k) { k.name; }

  bool has(const K& key) const { return has(key.name); }
  template <class K>

  requires requires(const K& k) { k.name; }

  Node at(const K& key) const { return at(key.name); }

  [[noreturn]] void fail(std::string_view what) const;

  const std::string& file() const { return origin_->file; }
  const std::shared_ptr<const Origin>& origin() const { return origin_; }
  const Pointer& path() const { return path_; }
  const nlohmann::json& json() const { return *json_; }

 private:
  const nlohmann::json* json_;
  std::shared_ptr<const Origin> origin_;
  Pointer path_;
};

/// "WHERE: /pointer: what", WHERE the file or the --set argument that wrote the value.
[[noreturn]] void fail_at(const Origin& origin, const Node::Pointer& path, std::string_view what);

/// User text as a message shows it: control characters escaped (\n, \t, \xNN), so that a
/// message stays one line, and anything past `max` characters cut, saying how many were.
std::string echo(std::string_view text, std::size_t max = 80);

/// Checks root's "sources": an object whose keys are JSON pointers to values of the same
/// document (a pointer to nothing is a stale citation) and whose values are strings.
void check_sources(const Node& root);

}  // namespace hopsim::config
