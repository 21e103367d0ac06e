// A JSON node that remembers its file and JSON pointer, for precise config errors.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hopsim::config {

/// Bad user input: the message names the file, the JSON pointer, what was found and expected.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Node {
 public:
  using Pointer = nlohmann::json::json_pointer;

  Node(const nlohmann::json& json, std::string file, Pointer path = Pointer())
      : json_(&json), file_(std::move(file)), path_(std::move(path)) {}

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
  /// A number that must be > 0 (bandwidths, sizes, counts of things that exist).
  double positive() const;
  /// A number that must be >= 0 (latencies, start times).
  double non_negative() const;
  std::int64_t integer() const;
  /// An integer in [lo, hi].
  std::int64_t integer_in(std::int64_t lo, std::int64_t hi) const;
  bool boolean() const;
  std::string string() const;
  /// A string that must be one of `choices`.
  std::string one_of(std::initializer_list<std::string_view> choices) const;

  /// Rejects typos: every key present must be one the parser knows.
  void allow_only(std::initializer_list<std::string_view> keys) const;

  [[noreturn]] void fail(std::string_view what) const;

  const std::string& file() const { return file_; }
  const Pointer& path() const { return path_; }
  const nlohmann::json& json() const { return *json_; }

 private:
  const nlohmann::json* json_;
  std::string file_;
  Pointer path_;
};

/// Checks root's "sources": an object whose keys are JSON pointers to values of the same
/// document (a pointer to nothing is a stale citation) and whose values are strings.
void check_sources(const Node& root);

}  // namespace hopsim::config
